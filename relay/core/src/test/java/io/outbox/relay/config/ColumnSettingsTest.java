package io.outbox.relay.config;

import static io.outbox.relay.config.ConfigFiles.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.SettingsProblem;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code columns.*} of a pipeline: the relay's names by default, a table's own, clear errors. */
class ColumnSettingsTest {

  @TempDir Path dir;

  private Map<String, String> columns(String extra) {
    return new ConfigFiles(dir)
        .load(ORDERS + extra)
        .settings()
        .pipelines()
        .get("orders")
        .database()
        .columns();
  }

  @Test
  void defaultsAreTheRelaysOwnNames() {
    assertThat(columns(""))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "id", "id",
                "event-id", "event_id",
                "aggregate-type", "aggregate_type",
                "aggregate-id", "aggregate_id",
                "event-type", "event_type",
                "payload", "payload"));
  }

  @Test
  void debeziumsLayoutIsMapped() {
    assertThat(
            columns(
                "outbox-relay.pipelines.orders.columns { id = relay_id, event-id = id,"
                    + " aggregate-type = aggregatetype, aggregate-id = aggregateid,"
                    + " event-type = type }\n"))
        .containsEntry("event-id", "id")
        .containsEntry("id", "relay_id")
        .containsEntry("event-type", "type")
        .containsEntry("payload", "payload");
  }

  @Test
  void badNamesAndAColumnMappedTwiceAreReportedWithTheirKeys() {
    List<SettingsProblem> problems =
        new ConfigFiles(dir)
            .problems(
                ORDERS
                    + "outbox-relay.pipelines.orders.columns { event-id = \"1d\","
                    + " aggregate-id = aggregate_type, event-typ = x }\n");

    assertThat(problems)
        .extracting(p -> p.path() + ": " + p.message())
        .anySatisfy(
            line ->
                assertThat(line)
                    .startsWith(
                        "outbox-relay.pipelines.orders.columns.event-id: must be a column name"))
        .anySatisfy(
            line ->
                assertThat(line)
                    .startsWith("outbox-relay.pipelines.orders.columns.aggregate-")
                    .contains("is already the column of columns.aggregate-"))
        .anySatisfy(line -> assertThat(line).contains("columns.event-typ"));
  }
}
