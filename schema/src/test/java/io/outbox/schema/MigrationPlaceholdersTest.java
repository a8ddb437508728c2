package io.outbox.schema;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.client.OutboxTables;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The values the migrations' placeholders get from the table names. */
class MigrationPlaceholdersTest {

  private static final String LONG_63 = "t".repeat(63);

  @Test
  void placeholdersAreSingleQuotedIdentifiers() {
    Map<String, String> values = MigrationPlaceholders.of(OutboxTables.of("outbox"));

    assertThat(values)
        .containsEntry("outbox_table", "\"public\".\"outbox\"")
        .containsEntry("outbox_pkey", "\"outbox_pkey\"")
        .containsEntry("outbox_event_id_key", "\"outbox_event_id_key\"")
        .containsEntry("pending_index", "\"outbox_pending_idx\"")
        .containsEntry("retrying_index", "\"outbox_retrying_idx\"")
        .containsEntry("dead_letter_table", "\"public\".\"outbox_dead_letter\"")
        .containsEntry("dead_letter_pkey", "\"outbox_dead_letter_pkey\"")
        .containsEntry("dead_letter_reason_check", "\"outbox_dead_letter_reason_check\"")
        .containsEntry("dead_lettered_at_index", "\"outbox_dead_letter_dead_lettered_at_idx\"")
        .containsEntry("dead_letter_event_id_index", "\"outbox_dead_letter_event_id_idx\"")
        .containsEntry("notify_function", "\"public\".\"outbox_relay_notify_outbox\"")
        .containsEntry("notify_channel", "'outbox_relay_public_outbox'")
        .containsEntry("wake_lock_key", Integer.toString(OutboxTables.of("outbox").wakeLockKey()));
  }

  @Test
  void placeholdersOfLongNamesAreDistinctAndFit() {
    Map<String, String> values = MigrationPlaceholders.of(OutboxTables.of(LONG_63 + "." + LONG_63));

    Set<String> names = new TreeSet<>();
    values.forEach(
        (key, value) -> {
          if (key.equals("notify_channel") || key.equals("wake_lock_key")) {
            return;
          }
          for (String part : value.split("\\.")) {
            assertThat(part).as(key).matches("\"[A-Za-z0-9_]{1,63}\"");
          }
          if (!key.endsWith("_table") && !key.equals("notify_function")) {
            names.add(value);
          }
        });
    assertThat(names).hasSize(13);
  }

  @Test
  void everyPlaceholderOfTheMigrationsHasAValue() throws IOException {
    String sql = "";
    for (String migration :
        new String[] {
          "V1__outbox_tables.sql",
          "V2__cdc_offsets.sql",
          "V3__retention.sql",
          "V4__leader_lease.sql",
          "V5__ledger_watermark.sql",
          "V6__quiet_wake_ups.sql",
          "V7__notify_only_listeners.sql",
          "V8__inserting_transaction.sql"
        }) {
      try (InputStream in =
          getClass().getResourceAsStream("/db/outbox-relay/migration/" + migration)) {
        assertThat(in).as(migration).isNotNull();
        sql += new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    }
    Set<String> used = new TreeSet<>();
    Matcher matcher = Pattern.compile("\\$\\{([^}]+)}").matcher(sql);
    while (matcher.find()) {
      used.add(matcher.group(1));
    }

    assertThat(used).isEqualTo(MigrationPlaceholders.of(OutboxTables.of("outbox")).keySet());
  }
}
