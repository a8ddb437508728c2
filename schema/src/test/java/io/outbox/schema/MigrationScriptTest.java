package io.outbox.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MigrationScriptTest {

  private static final List<String> FILES =
      List.of(
          "V1__outbox_tables.sql",
          "V2__cdc_offsets.sql",
          "V3__retention.sql",
          "V4__leader_lease.sql",
          "V5__ledger_watermark.sql",
          "V6__quiet_wake_ups.sql");

  @Test
  void aTableInAnotherLayoutIsRefusedNamingWhy() {
    OutboxTables tables = OutboxTables.of("outbox").withColumns(OutboxColumns.DEBEZIUM);

    assertThatThrownBy(() -> new Migrator(tables).script())
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining("cannot print the SQL for a table in another layout")
        .hasMessageContaining("run migrate against it");
  }

  @Test
  void thePartitionedLayoutIsRefusedNamingWhy() {
    Migrator migrator = new Migrator(OutboxTables.of("outbox"), new PartitionedLayout(4, 1000));

    assertThatThrownBy(migrator::script)
        .isInstanceOf(MigrationException.class)
        .hasMessage(
            "Migrating the outbox table public.outbox failed: cannot print the SQL of the"
                + " partitioned layout: the conversion depends on the table it finds (its rows,"
                + " grants, indexes); run migrate against the database");
  }

  @Test
  void partitionedLayoutShapesOutsideTheirRangesAreRefused() {
    assertThatThrownBy(() -> new PartitionedLayout(1, 1000))
        .hasMessage("partitions.count must be 2..64, not 1");
    assertThatThrownBy(() -> new PartitionedLayout(4, 999))
        .hasMessage("partitions.size must be 1000..1000000000, not 999");
  }

  @Test
  void holdsEveryMigrationInVersionOrderWithThePlaceholdersReplaced() throws IOException {
    OutboxTables tables = OutboxTables.of("billing.outbox");
    String script = new Migrator(tables).script();

    assertThat(script).doesNotContain("${");
    List<Integer> positions = new ArrayList<>();
    for (String file : FILES) {
      String expected = replaced(resource(file), MigrationPlaceholders.of(tables));
      assertThat(script).contains("\n-- " + file + "\n" + expected);
      positions.add(script.indexOf("\n-- " + file + "\n"));
    }
    assertThat(positions).isSorted();
    assertThat(script)
        .startsWith("-- outbox-relay schema of the outbox billing.outbox")
        .contains("migrations V1 to V8")
        .contains("\nCREATE SCHEMA IF NOT EXISTS \"billing\";\n")
        .contains("CREATE TABLE IF NOT EXISTS \"billing\".\"outbox\" (");
  }

  @Test
  void createsNoSchemaForPublic() {
    assertThat(new Migrator(OutboxTables.of("outbox")).script())
        .doesNotContain("CREATE SCHEMA")
        .contains("CREATE TABLE IF NOT EXISTS \"public\".\"outbox\" (");
  }

  @Test
  void createsTheDeadLetterTablesSchemaToo() {
    assertThat(new Migrator(OutboxTables.of("outbox", "archive.dead")).script())
        .contains("\nCREATE SCHEMA IF NOT EXISTS \"archive\";\n")
        .contains("CREATE TABLE IF NOT EXISTS \"archive\".\"dead\" (");
  }

  private static String resource(String file) throws IOException {
    try (InputStream in =
        MigrationScriptTest.class.getResourceAsStream("/db/outbox-relay/migration/" + file)) {
      assertThat(in).as(file).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static String replaced(String sql, Map<String, String> placeholders) {
    String result = sql;
    for (Map.Entry<String, String> p : placeholders.entrySet()) {
      result = result.replace("${" + p.getKey() + "}", p.getValue());
    }
    return result;
  }
}
