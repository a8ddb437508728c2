package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.testkit.TestEvents;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.junit.jupiter.api.Test;

class TaskMetricsTest {

  @Test
  void countsSettlementsAsTheDatabaseRecordedThem() {
    Map<String, String> tags = new LinkedHashMap<>();
    tags.put("connector", "orders");
    tags.put("task", "0");
    try (Metrics metrics = new Metrics()) {
      PluginMetrics plugin = new PluginMetricsImpl(metrics, tags);
      TaskMetrics task = TaskMetrics.of(context(plugin));
      Settlement.Retry keptDeadLetter =
          new Settlement.Retry(event(4), 1, Duration.ofMinutes(1), "x");
      task.settled(
          List.of(
              new Settlement.Published(event(1)),
              new Settlement.Published(event(2)),
              new Settlement.Retry(event(3), 1, Duration.ofSeconds(1), "gave up"),
              new Settlement.DeadLetter(event(4), Settlement.DeadLetterReason.PERMANENT, 1, "x"),
              new Settlement.DeadLetter(event(5), Settlement.DeadLetterReason.PERMANENT, 1, "x")),
          new Settled(List.of(keptDeadLetter)));
      task.settled(List.of(new Settlement.Published(event(6))), Settled.AS_GIVEN);

      assertThat(value(metrics, "published-total", tags)).isEqualTo(3.0);
      assertThat(value(metrics, "retried-total", tags)).isEqualTo(2.0);
      assertThat(value(metrics, "dead-lettered-total", tags)).isEqualTo(1.0);
      assertThat(value(metrics, "published-rate", tags)).isPositive();
    }
  }

  @Test
  void countsNothingWithoutAWorker() {
    // No task context, as with a worker older than Kafka 4.1: counting is a no-op.
    assertThatCode(
            () ->
                TaskMetrics.of(null)
                    .settled(List.of(new Settlement.Published(event(1))), Settled.AS_GIVEN))
        .doesNotThrowAnyException();
  }

  private static double value(Metrics metrics, String name, Map<String, String> tags) {
    MetricName id = metrics.metricName(name, "plugins", "", tags);
    assertThat(metrics.metric(id)).as(name + " in " + metrics.metrics().keySet()).isNotNull();
    return ((Number) metrics.metric(id).metricValue()).doubleValue();
  }

  private static SourceTaskContext context(PluginMetrics metrics) {
    return new SourceTaskContext() {
      @Override
      public Map<String, String> configs() {
        return Map.of();
      }

      @Override
      public OffsetStorageReader offsetStorageReader() {
        return null;
      }

      @Override
      public PluginMetrics pluginMetrics() {
        return metrics;
      }
    };
  }

  private static OutboxEvent event(long id) {
    return TestEvents.event(id, "o-" + id);
  }
}
