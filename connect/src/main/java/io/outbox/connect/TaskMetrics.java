package io.outbox.connect;

import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import java.util.LinkedHashMap;
import java.util.List;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.CumulativeSum;
import org.apache.kafka.common.metrics.stats.Rate;
import org.apache.kafka.connect.source.SourceTaskContext;

/**
 * A task's own counters, registered with the worker's metrics (KIP-877, Kafka 4.1+): the worker
 * shows them in JMX as {@code kafka.connect:type=plugins,connector=<name>,task=<n>}, beside
 * Connect's own task metrics. On an older worker, or without a context, nothing is registered.
 */
final class TaskMetrics {

  private final Sensor published;
  private final Sensor retried;
  private final Sensor deadLettered;

  private TaskMetrics(Sensor published, Sensor retried, Sensor deadLettered) {
    this.published = published;
    this.retried = retried;
    this.deadLettered = deadLettered;
  }

  /** The counters of the task of {@code context}; counting nothing when the worker has none. */
  static TaskMetrics of(SourceTaskContext context) {
    PluginMetrics metrics;
    try {
      metrics = context == null ? null : context.pluginMetrics();
    } catch (NoSuchMethodError | UnsupportedOperationException e) {
      metrics = null; // a worker older than Kafka 4.1
    }
    if (metrics == null) {
      return new TaskMetrics(null, null, null);
    }
    return new TaskMetrics(
        sensor(metrics, "published", "events acknowledged by Kafka and marked (or deleted)"),
        sensor(metrics, "retried", "events whose record the worker gave up, set to retry"),
        sensor(metrics, "dead-lettered", "events moved to the dead-letter table"));
  }

  private static Sensor sensor(PluginMetrics metrics, String name, String what) {
    Sensor s = metrics.addSensor(name);
    s.add(
        metrics.metricName(name + "-total", "Total " + what, new LinkedHashMap<>()),
        new CumulativeSum());
    s.add(
        metrics.metricName(name + "-rate", "Per second, " + what, new LinkedHashMap<>()),
        new Rate());
    return s;
  }

  /**
   * Counts the settlements of a batch as the database recorded them: a dead letter the dead-letter
   * table refused stays in the outbox as a retry ({@code settled.deadLettersKept()}).
   */
  void settled(List<Settlement> settlements, Settled settled) {
    if (published == null) {
      return;
    }
    int p = 0;
    int r = 0;
    int d = 0;
    for (Settlement s : settlements) {
      if (s instanceof Settlement.Published) {
        p++;
      } else if (s instanceof Settlement.Retry) {
        r++;
      } else if (s instanceof Settlement.DeadLetter) {
        d++;
      }
    }
    int kept = settled.deadLettersKept().size();
    published.record(p);
    retried.record(r + kept);
    deadLettered.record(d - kept);
  }
}
