package io.outbox.relay.pipeline;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.Source;
import java.time.Clock;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the last backlog figures a pipeline's source reported ({@link Source#backlog()}) and
 * exports them as gauges, registered on the first successful read; a scrape reads the cache, never
 * the database. Read by one thread at a time ({@link #refresh()}).
 */
final class BacklogMonitor {
  private static final Logger log = LoggerFactory.getLogger(BacklogMonitor.class);

  private final String pipeline;
  private final Source source;
  private final MeterRegistry registry;
  private final Tags tags;
  private final Clock clock;
  private final Counter failures;
  private final BooleanSupplier stopping;
  private volatile Backlog last;
  private volatile double readAtSeconds = Double.NaN;
  private boolean registered;
  private boolean walRegistered;
  private boolean walKeepRegistered;
  private boolean slotCreationRegistered;
  private boolean earlierRoundRegistered;
  private boolean failing;

  /**
   * @param stopping true once the pipeline stops: a read cut short by the stop is not a failure
   */
  BacklogMonitor(
      String pipeline,
      Source source,
      MeterRegistry registry,
      Clock clock,
      BooleanSupplier stopping) {
    this.pipeline = pipeline;
    this.stopping = stopping;
    this.source = source;
    this.registry = registry;
    this.tags = Tags.of("pipeline", pipeline);
    this.clock = clock;
    this.failures =
        Counter.builder("outbox.relay.backlog.read.failures")
            .description("Backlog reads that failed.")
            .tags(tags)
            .register(registry);
  }

  /** The figures of the last successful read, if any. */
  Optional<Backlog> last() {
    return Optional.ofNullable(last);
  }

  /**
   * Asks the source for fresh figures.
   *
   * @return whether the source answered (false: its database failed); empty when the source reports
   *     no backlog
   */
  synchronized Optional<Boolean> refresh() {
    Optional<Backlog> read;
    try {
      read = source.backlog();
    } catch (RuntimeException e) {
      // SourceException: the database failed; anything else is a source's bug, reported alike
      // rather than ending the relay's backlog thread.
      if (stopping.getAsBoolean()) {
        return Optional.empty();
      }
      failures.increment();
      if (!failing) {
        failing = true;
        log.warn("pipeline {}: cannot read the backlog figures: {}", pipeline, Lane.oneLine(e));
      }
      return Optional.of(false);
    }
    if (read.isEmpty()) {
      return Optional.empty();
    }
    if (failing) {
      failing = false;
      log.info("pipeline {}: backlog figures readable again", pipeline);
    }
    last = read.get();
    readAtSeconds = clock.millis() / 1000.0;
    register();
    return Optional.of(true);
  }

  private void register() {
    if (!registered) {
      registered = true;
      gauge("outbox.relay.pending.events", "Rows not yet published.", b -> b.pending());
      gauge(
          "outbox.relay.oldest.pending.age.seconds",
          "Age of the oldest due pending row, by the database clock.",
          b -> b.oldestPendingAge().toNanos() / 1e9);
      gauge(
          "outbox.relay.retrying.events",
          "Pending rows that failed at least once.",
          b -> b.retrying());
      gauge(
          "outbox.relay.dead.letters",
          "Rows of the pipeline in the dead-letter table now.",
          b -> b.deadLetters());
      Gauge.builder("outbox.relay.backlog.read.timestamp.seconds", this, m -> m.readAtSeconds)
          .description("Unix time of the last successful backlog read.")
          .tags(tags)
          .strongReference(true)
          .register(registry);
    }
    if (!walRegistered && last.retainedWalBytes().isPresent()) {
      walRegistered = true;
      gauge(
          "outbox.relay.cdc.retained.wal.bytes",
          "WAL bytes the replication slot keeps the server from recycling.",
          b -> b.retainedWalBytes().isPresent() ? b.retainedWalBytes().getAsLong() : Double.NaN);
    }
    if (!walKeepRegistered && last.walKeepShare().isPresent()) {
      walKeepRegistered = true;
      gaugeWithOldName(
          "outbox.relay.cdc.wal.keep.ratio",
          "outbox.relay.cdc.wal.keep.share",
          "The slot's retained WAL as a ratio of max_slot_wal_keep_size (1: invalidated).",
          b -> b.walKeepShare().isPresent() ? b.walKeepShare().getAsDouble() : Double.NaN);
    }
    if (!earlierRoundRegistered && last.earlierRoundRows().isPresent()) {
      earlierRoundRegistered = true;
      gauge(
          "outbox.relay.partition.earlier.round.rows",
          "Rows of an earlier round of ids in the partition taking ids (above 0: it cannot be"
              + " emptied, and grows).",
          b -> b.earlierRoundRows().isPresent() ? b.earlierRoundRows().getAsLong() : Double.NaN);
    }
    if (!slotCreationRegistered && last.slotCreationBlocked().isPresent()) {
      slotCreationRegistered = true;
      gaugeWithOldName(
          "outbox.relay.cdc.slot.creation.blocking.transactions",
          "outbox.relay.cdc.slot.creation.blocked",
          "Transactions the creation of the replication slot waits for (0: not waiting).",
          b ->
              b.slotCreationBlocked().isPresent()
                  ? b.slotCreationBlocked().getAsLong()
                  : Double.NaN);
    }
  }

  /**
   * A gauge renamed to the Prometheus conventions, also served under its old name for one release
   * (docs/metrics.md lists the old names as deprecated).
   */
  private void gaugeWithOldName(
      String name, String oldName, String help, ToDoubleFunction<Backlog> value) {
    gauge(name, help, value);
    gauge(oldName, "Deprecated: use " + name.replace('.', '_') + " (removed in 0.3.0).", value);
  }

  private void gauge(String name, String help, ToDoubleFunction<Backlog> value) {
    Gauge.builder(name, this, m -> value.applyAsDouble(m.last))
        .description(help)
        .tags(tags)
        .strongReference(true)
        .register(registry);
  }
}
