package io.outbox.source.polling;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The outbox and dead-letter tables of a pipeline, quoted for SQL, and the names derived from them
 * (notify channel, advisory lock keys).
 *
 * <p>The naming rules replicate {@code io.outbox.schema.OutboxTables}, which created the tables:
 * {@code name} or {@code schema.name}, ASCII letters, digits and {@code _}, case kept, unqualified
 * names in {@code public}. A test checks that both agree.
 */
final class TableNames {

  static final String DEFAULT_SCHEMA = "public";
  private static final int MAX_IDENTIFIER_BYTES = 63;
  private static final int HASH_CHARS = 8;
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
  private static final Pattern CHANNEL_SAFE = Pattern.compile("[a-z0-9_]+");

  private final String schema;
  private final String table;
  private final String deadLetterSchema;
  private final String deadLetterTable;

  private TableNames(String[] outbox, String[] deadLetter) {
    this.schema = outbox[0];
    this.table = outbox[1];
    this.deadLetterSchema = deadLetter[0];
    this.deadLetterTable = deadLetter[1];
  }

  /**
   * Parses the configured names.
   *
   * @throws IllegalArgumentException naming the bad value
   */
  static TableNames of(String table, String deadLetterTable) {
    TableNames names =
        new TableNames(split(table, "table"), split(deadLetterTable, "dead-letter-table"));
    if (names.displayTable().equals(names.displayDeadLetterTable())) {
      throw new IllegalArgumentException(
          "the dead-letter table must differ from the outbox table, both are '"
              + names.displayTable()
              + "'");
    }
    return names;
  }

  /** {@code "schema"."table"}. */
  String qualifiedTable() {
    return quote(schema) + "." + quote(table);
  }

  /** {@code "schema"."dead_letter_table"}. */
  String qualifiedDeadLetterTable() {
    return quote(deadLetterSchema) + "." + quote(deadLetterTable);
  }

  /** {@code schema.table}, for messages and as the stable identity of the outbox. */
  String displayTable() {
    return schema + "." + table;
  }

  String displayDeadLetterTable() {
    return deadLetterSchema + "." + deadLetterTable;
  }

  /**
   * The channel the migration's insert trigger notifies: {@code outbox_relay_<schema>_<table>}, or,
   * when that is not all lower-case or longer than 63 bytes, its lower-cased prefix plus a hash of
   * {@code schema.table}.
   */
  String notifyChannel() {
    String base = "outbox_relay_" + schema + "_" + table;
    if (base.length() <= MAX_IDENTIFIER_BYTES && CHANNEL_SAFE.matcher(base).matches()) {
      return base;
    }
    String lower = base.toLowerCase(Locale.ROOT);
    String hash = HexFormat.of().formatHex(sha256(schema + "." + table)).substring(0, HASH_CHARS);
    int keep = Math.min(lower.length(), MAX_IDENTIFIER_BYTES - HASH_CHARS - 1);
    return lower.substring(0, keep) + "_" + hash;
  }

  /**
   * The session advisory lock that makes one instance the pipeline's active publisher: a stable
   * 64-bit hash of the pipeline and the outbox (the same on every instance and JVM).
   */
  long leaderLockKey(String pipeline) {
    byte[] digest = sha256("outbox-relay:leader:" + pipeline + ":" + displayTable());
    long key = 0;
    for (int i = 0; i < 8; i++) {
      key = (key << 8) | (digest[i] & 0xff);
    }
    return key;
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

  static String quote(String identifier) {
    return "\"" + identifier.replace("\"", "\"\"") + "\"";
  }

  private static String[] split(String name, String key) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException(key + " must be 'name' or 'schema.name', it is empty");
    }
    String[] parts = name.split("\\.", -1);
    String[] result =
        parts.length == 1
            ? new String[] {DEFAULT_SCHEMA, parts[0]}
            : parts.length == 2 ? parts : null;
    if (result == null
        || !IDENTIFIER.matcher(result[0]).matches()
        || !IDENTIFIER.matcher(result[1]).matches()) {
      throw new IllegalArgumentException(
          key
              + " must be 'name' or 'schema.name', each part of at most 63 letters, digits and '_'"
              + " not starting with a digit, got '"
              + name
              + "'");
    }
    return result;
  }

  private static byte[] sha256(String value) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }
}
