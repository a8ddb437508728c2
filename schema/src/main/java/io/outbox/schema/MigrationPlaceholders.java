package io.outbox.schema;

import static io.outbox.client.OutboxTables.fit;
import static io.outbox.client.OutboxTables.quote;

import io.outbox.client.OutboxTables;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The Flyway placeholders of the migrations under {@code db/outbox-relay/migration}: every table,
 * index, constraint and function name, computed from {@link OutboxTables} and already quoted, so
 * that the SQL never glues identifiers together.
 */
final class MigrationPlaceholders {

  private MigrationPlaceholders() {}

  /** Placeholder name to its value. */
  static Map<String, String> of(OutboxTables tables) {
    String outbox = tables.table();
    String dead = tables.deadLetterTable();
    Map<String, String> values = new LinkedHashMap<>();
    values.put("outbox_table", tables.qualifiedTable());
    values.put("outbox_pkey", quote(fit(outbox, "_pkey")));
    values.put("outbox_event_id_key", quote(fit(outbox, "_event_id_key")));
    values.put("pending_index", quote(fit(outbox, "_pending_idx")));
    values.put("retrying_index", quote(fit(outbox, "_retrying_idx")));
    values.put("published_index", quote(fit(outbox, "_published_idx")));
    values.put("dead_letter_table", tables.qualifiedDeadLetterTable());
    values.put("dead_letter_pkey", quote(fit(dead, "_pkey")));
    values.put("dead_letter_reason_check", quote(fit(dead, "_reason_check")));
    values.put("dead_lettered_at_index", quote(fit(dead, "_dead_lettered_at_idx")));
    values.put("dead_letter_event_id_index", quote(fit(dead, "_event_id_idx")));
    values.put("offsets_table", quote(tables.schema()) + "." + quote(tables.offsetsTable()));
    values.put("offsets_pkey", quote(fit(tables.offsetsTable(), "_pkey")));
    values.put("leader_table", quote(tables.schema()) + "." + quote(tables.leaderTable()));
    values.put("leader_pkey", quote(fit(tables.leaderTable(), "_pkey")));
    values.put("ledger_table", tables.qualifiedLedgerTable());
    values.put("ledger_pkey", quote(fit(tables.ledgerTable(), "_pkey")));
    values.put("position_table", tables.qualifiedPositionTable());
    values.put("position_pkey", quote(fit(tables.positionTable(), "_pkey")));
    values.put("notify_function", quote(tables.schema()) + "." + quote(tables.notifyFunction()));
    // The channel is lower-case letters, digits and '_' (see OutboxTables), safe in a literal.
    values.put("notify_channel", "'" + tables.notifyChannel() + "'");
    // An int literal (a hash, never user text): the advisory locks of the quiet wake-up (V6).
    values.put("wake_lock_key", Integer.toString(tables.wakeLockKey()));
    return Map.copyOf(values);
  }
}
