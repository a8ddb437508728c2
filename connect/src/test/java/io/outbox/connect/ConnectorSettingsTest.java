package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.junit.jupiter.api.Test;

class ConnectorSettingsTest {

  private static Map<String, String> valid() {
    Map<String, String> p = new HashMap<>();
    p.put("name", "orders-connector");
    p.put("connector.class", OutboxSourceConnector.class.getName());
    p.put("tasks.max", "2");
    p.put("database.url", "jdbc:postgresql://127.0.0.1:5432/app");
    p.put("database.user", "app");
    return p;
  }

  @Test
  void definesTheDaemonsPipelineKeysWithTheirReferenceDefaults() {
    ConfigDef def = ConnectorSettings.configDef();
    Map<String, ConfigDef.ConfigKey> keys = def.configKeys();
    assertThat(keys)
        .containsKeys(
            "pipeline",
            "database.url",
            "database.user",
            "database.password",
            "table",
            "dead-letter-table",
            "on-publish",
            "lanes",
            "batch-size",
            "routing.destination",
            "retry.max-attempts",
            "retry.initial-backoff",
            "retention.published",
            "source.polling.poll-interval",
            "source.polling.lease-timeout");
    assertThat(keys.keySet())
        .noneMatch(
            k -> k.startsWith("sink.") || k.startsWith("source.cdc") || k.equals("source.type"));
    assertThat(keys.get("retry.max-attempts").defaultValue).isEqualTo("10");
    assertThat(keys.get("source.polling.poll-interval").defaultValue).isEqualTo("1s");
    assertThat(keys.get("routing.destination").defaultValue).isEqualTo("outbox.${aggregate_type}");
    assertThat(keys.get("database.password").type).isEqualTo(ConfigDef.Type.PASSWORD);
    assertThat(keys.get("source.polling.poll-interval").documentation).contains("idle lane");
  }

  @Test
  void bindsTheSettingsLikeTheDaemon() {
    Map<String, String> p = valid();
    p.put("pipeline", "orders");
    p.put("lanes", "4");
    p.put("retry.max-attempts", "3");
    p.put("retry.initial-backoff", "250ms");
    p.put("on-publish", "delete");
    p.put("database.properties.ApplicationName", "connect");
    p.put("source.polling.poll-interval", "200ms");
    ConnectorSettings.Bound bound = ConnectorSettings.bind(p, "orders-connector");
    assertThat(bound.problems()).isEmpty();
    assertThat(bound.pipeline().name()).isEqualTo("orders");
    assertThat(bound.pipeline().lanes()).isEqualTo(4);
    assertThat(bound.pipeline().retry().maxAttempts()).isEqualTo(3);
    assertThat(bound.pipeline().retry().backoff().initial().toMillis()).isEqualTo(250);
    assertThat(bound.pipeline().database().onPublish().name()).isEqualTo("DELETE");
    assertThat(bound.pipeline().database().properties())
        .containsEntry("ApplicationName", "connect");
    assertThat(bound.pipeline().sourceSettings().getDuration("poll-interval").toMillis())
        .isEqualTo(200);
  }

  @Test
  void validateNamesEveryBadKeyAtOnce() {
    Map<String, String> p = valid();
    p.remove("database.url");
    p.put("retry.max-attempts", "zero");
    p.put("source.polling.poll-interval", "1ms");
    p.put("routing.destination", "orders.${nope}");
    p.put("on-publish", "archive");
    List<ConfigValue> values = new OutboxSourceConnector().validate(p).configValues();
    Map<String, List<String>> errors =
        values.stream()
            .filter(v -> !v.errorMessages().isEmpty())
            .collect(Collectors.toMap(ConfigValue::name, ConfigValue::errorMessages));
    assertThat(errors)
        .containsOnlyKeys(
            "database.url",
            "retry.max-attempts",
            "source.polling.poll-interval",
            "routing.destination",
            "on-publish");
    assertThat(errors.get("routing.destination").get(0)).contains("${nope}");
    assertThat(errors.get("on-publish").get(0)).contains("archive");
  }

  @Test
  void refusesAWorkerThatSkipsRecordsItCouldNotConvertInATransactionPerBatch() {
    Map<String, String> p = valid();
    p.put("errors.tolerance", "all");
    assertThat(ConnectorSettings.bind(p, "orders").problems()).isEmpty(); // at least once
    p.put("transaction.boundary", "connector");
    p.put("retry.max-attempts", "zero");
    Map<String, List<String>> errors =
        new OutboxSourceConnector()
            .validate(p).configValues().stream()
                .filter(v -> !v.errorMessages().isEmpty())
                .collect(Collectors.toMap(ConfigValue::name, ConfigValue::errorMessages));
    assertThat(errors).containsOnlyKeys("errors.tolerance", "retry.max-attempts");
    assertThat(errors.get("errors.tolerance").get(0))
        .contains("must be none with transaction.boundary = connector");

    p.put("retry.max-attempts", "3");
    assertThat(ConnectorSettings.bind(p, "orders").problems())
        .extracting(ConnectorSettings.Problem::key)
        .containsExactly("errors.tolerance");
    p.put("errors.tolerance", "none");
    assertThat(ConnectorSettings.bind(p, "orders").problems()).isEmpty();
  }

  @Test
  void refusesSettlementByPosition() {
    Map<String, String> p = valid();
    p.put("on-publish", "position");
    assertThat(ConnectorSettings.bind(p, "orders").problems())
        .extracting(ConnectorSettings.Problem::key, ConnectorSettings.Problem::message)
        .containsExactly(
            tuple(
                "on-publish",
                "position is not available in the connector yet (the daemon's polling source"
                    + " settles by position): use mark or delete"));
  }

  @Test
  void maxRecordBytesIsTheConnectorsOwnKeyAndNamesABadValue() {
    Map<String, String> p = valid();
    assertThat(ConnectorSettings.maxRecordBytes(p)).isEqualTo(1_048_576);
    p.put("max-record-bytes", "2000000");
    assertThat(ConnectorSettings.bind(p, "orders").problems()).isEmpty();
    assertThat(ConnectorSettings.maxRecordBytes(p)).isEqualTo(2_000_000);
    p.put("max-record-bytes", "1MB");
    assertThat(ConnectorSettings.bind(p, "orders").problems())
        .singleElement()
        .satisfies(
            problem -> {
              assertThat(problem.key()).isEqualTo("max-record-bytes");
              assertThat(problem.message()).contains("whole number of bytes").contains("'1MB'");
            });
    p.put("max-record-bytes", "100");
    assertThat(ConnectorSettings.bind(p, "orders").problems())
        .extracting(ConnectorSettings.Problem::message)
        .singleElement()
        .asString()
        .contains("at least 1024");
  }

  @Test
  void validAccordingToValidateWhenTheDaemonWouldAccept() {
    List<ConfigValue> values = new OutboxSourceConnector().validate(valid()).configValues();
    assertThat(values).allMatch(v -> v.errorMessages().isEmpty());
  }

  @Test
  void bindsADeadLetterDestinationAndChecksItsTemplate() {
    Map<String, String> p = valid();
    p.put("dead-letter.destination", "outbox.dead.${aggregate_type}");
    ConnectorSettings.Bound bound = ConnectorSettings.bind(p, "x");
    assertThat(bound.problems()).isEmpty();
    assertThat(bound.pipeline().deadLetterDestination()).isEqualTo("outbox.dead.${aggregate_type}");

    p.put("dead-letter.destination", "outbox.dead.${nope}");
    assertThat(ConnectorSettings.bind(p, "x").problems())
        .extracting(ConnectorSettings.Problem::key)
        .containsExactly("dead-letter.destination");
  }

  @Test
  void spreadsLanesOverTasksNeverMoreTasksThanLanes() {
    Map<String, String> p = valid();
    p.put("lanes", "4");
    OutboxSourceConnector connector = new OutboxSourceConnector();
    connector.start(p);
    assertThat(connector.taskConfigs(3))
        .extracting(c -> c.get(ConnectorSettings.TASK_LANES))
        .containsExactly("0,3", "1", "2");
    assertThat(connector.taskConfigs(8))
        .extracting(c -> c.get(ConnectorSettings.TASK_LANES))
        .containsExactly("0", "1", "2", "3");
    assertThat(connector.taskConfigs(1))
        .extracting(
            c -> c.get(ConnectorSettings.TASK_INDEX) + ":" + c.get(ConnectorSettings.TASK_LANES))
        .containsExactly("0:0,1,2,3");
  }
}
