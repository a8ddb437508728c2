package io.outbox.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OutboxTablesTest {

  private static final String LONG_63 = "t".repeat(63);

  @Test
  void unqualifiedNamesLiveInPublic() {
    OutboxTables tables = OutboxTables.of("outbox", "outbox_dead_letter");

    assertThat(tables.schema()).isEqualTo("public");
    assertThat(tables.table()).isEqualTo("outbox");
    assertThat(tables.qualifiedTable()).isEqualTo("\"public\".\"outbox\"");
    assertThat(tables.deadLetterSchema()).isEqualTo("public");
    assertThat(tables.deadLetterTable()).isEqualTo("outbox_dead_letter");
    assertThat(tables.qualifiedDeadLetterTable()).isEqualTo("\"public\".\"outbox_dead_letter\"");
    assertThat(tables.displayTable()).isEqualTo("public.outbox");
  }

  @Test
  void schemaQualifiedNamesKeepTheirSchemas() {
    OutboxTables tables = OutboxTables.of("billing.events_outbox", "audit.events_dead");

    assertThat(tables.qualifiedTable()).isEqualTo("\"billing\".\"events_outbox\"");
    assertThat(tables.qualifiedDeadLetterTable()).isEqualTo("\"audit\".\"events_dead\"");
  }

  @Test
  void mixedCaseIsQuotedExactlyAsWritten() {
    OutboxTables tables = OutboxTables.of("Billing.OrderEvents", "Billing.OrderEvents_Dead");

    assertThat(tables.qualifiedTable()).isEqualTo("\"Billing\".\"OrderEvents\"");
    assertThat(tables.historyTable()).isEqualTo("OrderEvents_relay_schema_history");
  }

  @Test
  void defaultDeadLetterTableSitsBesideTheOutbox() {
    assertThat(OutboxTables.of("outbox").qualifiedDeadLetterTable())
        .isEqualTo("\"public\".\"outbox_dead_letter\"");
    assertThat(OutboxTables.of("billing.events").qualifiedDeadLetterTable())
        .isEqualTo("\"billing\".\"events_dead_letter\"");
    assertThat(OutboxTables.of(LONG_63).deadLetterTable()).hasSizeLessThanOrEqualTo(63);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        " ",
        "a.b.c",
        "1outbox",
        "bad-name",
        "out box",
        "outbox.",
        ".outbox",
        "out\"box",
        "public.\"outbox\"",
        "outbox;drop table x",
        "ünïcode"
      })
  void rejectsNamesThatAreNotIdentifiersAndNamesTheValue(String bad) {
    assertThatThrownBy(() -> OutboxTables.of(bad, "outbox_dead_letter"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("table")
        .hasMessageContaining("'" + bad + "'");
    assertThatThrownBy(() -> OutboxTables.of("outbox", bad))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("dead-letter-table")
        .hasMessageContaining("'" + bad + "'");
  }

  @Test
  void rejectsNull() {
    assertThatThrownBy(() -> OutboxTables.of(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("table must be set, it is null");
  }

  @Test
  void rejectsPartsLongerThanPostgresAllows() {
    String tooLong = "x".repeat(64);
    assertThatThrownBy(() -> OutboxTables.of("billing." + tooLong))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("64 bytes")
        .hasMessageContaining(tooLong);
    assertThat(OutboxTables.of("billing." + LONG_63).table()).isEqualTo(LONG_63);
  }

  @Test
  void rejectsTheSameTableForOutboxAndDeadLetters() {
    assertThatThrownBy(() -> OutboxTables.of("billing.outbox", "billing.outbox"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'billing.outbox'");
    assertThat(OutboxTables.of("billing.outbox", "outbox").deadLetterSchema()).isEqualTo("public");
  }

  @Test
  void notifyChannelNamesSchemaAndTable() {
    assertThat(OutboxTables.of("outbox").notifyChannel()).isEqualTo("outbox_relay_public_outbox");
    assertThat(OutboxTables.of("billing.events").notifyChannel())
        .isEqualTo("outbox_relay_billing_events");
  }

  @Test
  void notifyChannelIsLowerCaseAndDistinctForMixedCaseNames() {
    String upper = OutboxTables.of("Outbox").notifyChannel();
    String lower = OutboxTables.of("outbox").notifyChannel();

    assertThat(upper).matches("[a-z0-9_]+").startsWith("outbox_relay_public_outbox_");
    assertThat(upper).isNotEqualTo(lower);
  }

  @Test
  void notifyChannelFitsInAnIdentifierForLongNames() {
    String a = OutboxTables.of(LONG_63 + "." + LONG_63).notifyChannel();
    String b = OutboxTables.of(LONG_63 + "." + "t".repeat(62) + "u").notifyChannel();

    assertThat(a).hasSizeLessThanOrEqualTo(63).matches("[a-z0-9_]+");
    assertThat(b).hasSizeLessThanOrEqualTo(63).isNotEqualTo(a);
  }

  @Test
  void offsetsTableIsPerOutboxInItsSchemaAndFitsInAnIdentifier() {
    OutboxTables tables = OutboxTables.of("Billing.OrderEvents");
    assertThat(tables.offsetsTable()).isEqualTo("OrderEvents_relay_offsets");
    assertThat(tables.qualifiedOffsetsTable())
        .isEqualTo("\"Billing\".\"OrderEvents_relay_offsets\"");
    assertThat(tables.displayOffsetsTable()).isEqualTo("Billing.OrderEvents_relay_offsets");
    assertThat(OutboxTables.of(LONG_63).offsetsTable()).hasSize(63).endsWith("_relay_offsets");
  }

  @Test
  void historyTableIsPerOutboxAndFitsInAnIdentifier() {
    assertThat(OutboxTables.of("outbox").historyTable()).isEqualTo("outbox_relay_schema_history");
    String a = OutboxTables.of(LONG_63).historyTable();
    String b = OutboxTables.of("t".repeat(62) + "u").historyTable();

    // Flyway adds "_s_idx" to it for an index name: that must fit in 63 bytes too.
    assertThat(a).hasSize(57).endsWith("_relay_schema_history");
    assertThat(b).hasSize(57).isNotEqualTo(a);
    assertThat(OutboxTables.of("t".repeat(36)).historyTable())
        .hasSize(57)
        .startsWith("t".repeat(36));
    assertThat(OutboxTables.of("t".repeat(37)).historyTable()).hasSize(57).contains("_relay_");
  }

  @Test
  void wakeLockKeyIsStableAndDiffersPerTable() {
    assertThat(OutboxTables.of("outbox").wakeLockKey())
        .isEqualTo(OutboxTables.of("public.outbox").wakeLockKey())
        .isNotEqualTo(OutboxTables.of("app.outbox").wakeLockKey());
  }
}
