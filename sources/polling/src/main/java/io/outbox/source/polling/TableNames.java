package io.outbox.source.polling;

import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The outbox and dead-letter tables of a pipeline and what the polling source derives from them.
 * Naming, quoting and the notify channel are {@link OutboxTables}'s, the rules the migration
 * created the tables with; the advisory lock keys are the source's own.
 */
final class TableNames {

  private final OutboxTables tables;

  private TableNames(OutboxTables tables) {
    this.tables = tables;
  }

  /**
   * Parses the configured names.
   *
   * @throws IllegalArgumentException naming the bad value
   */
  static TableNames of(String table, String deadLetterTable) {
    return of(table, deadLetterTable, OutboxColumns.DEFAULT);
  }

  /**
   * Parses the configured names, for an outbox whose event columns are named {@code columns}.
   *
   * @throws IllegalArgumentException naming the bad value
   */
  static TableNames of(String table, String deadLetterTable, OutboxColumns columns) {
    return new TableNames(OutboxTables.of(table, deadLetterTable).withColumns(columns));
  }

  /** The outbox's names for the relay's event columns. */
  OutboxColumns columns() {
    return tables.columns();
  }

  /** The tables as the schema module names them. */
  OutboxTables outboxTables() {
    return tables;
  }

  /** {@code "schema"."table"}. */
  String qualifiedTable() {
    return tables.qualifiedTable();
  }

  /** {@code "schema"."dead_letter_table"}. */
  String qualifiedDeadLetterTable() {
    return tables.qualifiedDeadLetterTable();
  }

  /** {@code schema.table}, for messages and as the stable identity of the outbox. */
  String displayTable() {
    return tables.displayTable();
  }

  String displayDeadLetterTable() {
    return tables.displayDeadLetterTable();
  }

  /**
   * The channel the migration's insert trigger notifies; always lower-case letters, digits and
   * {@code _}.
   */
  String notifyChannel() {
    return tables.notifyChannel();
  }

  /** The pipeline's leader lock key ({@link OutboxTables#leaderLockKey}). */
  long leaderLockKey(String pipeline) {
    return tables.leaderLockKey(pipeline);
  }

  /** The tables as the schema module names them (for {@code OutboxStatus}). */
  OutboxTables tables() {
    return tables;
  }

  /**
   * The first half of the transaction advisory lock {@code (key, lane)} that a claim holds: a
   * stable 32-bit hash of the outbox alone, so that two pipelines misconfigured on one table still
   * exclude each other lane by lane.
   */
  int laneLockKey() {
    byte[] digest = sha256("outbox-relay:lane:" + displayTable());
    return ((digest[0] & 0xff) << 24)
        | ((digest[1] & 0xff) << 16)
        | ((digest[2] & 0xff) << 8)
        | (digest[3] & 0xff);
  }

  private static byte[] sha256(String value) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }
}
