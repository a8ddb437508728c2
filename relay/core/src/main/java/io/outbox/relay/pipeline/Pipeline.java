package io.outbox.relay.pipeline;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.LedgerWatermark;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.TransactionalSink;
import io.outbox.relay.spi.support.PipelineThreads;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one pipeline: waits (standby) until its source makes this instance active, then runs its
 * lanes until it stops or loses the active role ({@link Supervisor}). Builds the pipeline's parts,
 * reports its state and stops it. Knows no SQL and no broker API.
 */
public final class Pipeline {
  private static final Logger log = LoggerFactory.getLogger(Pipeline.class);
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration LEDGER_READ_TIMEOUT = Duration.ofSeconds(60);

  private final PipelineSettings settings;
  private final Source source;
  private final Sink sink;
  private final PipelineStats stats;
  private final BacklogMonitor backlog;
  private final SinkGate gate;
  private final Router router;
  private final Router deadLetterRouter;
  private final TransactionalSink transactional; // exactly-once; null when at least once
  private final PipelineState state;
  private final Supervisor supervisor;
  private final Ticker ticker;

  private Thread supervisorThread;

  /** Told when a pipeline meets an {@link Error} it cannot go on from. */
  @FunctionalInterface
  public interface FatalListener {
    void failed(String pipeline, Throwable error);
  }

  /**
   * @param registry where the pipeline's meters are registered, tagged {@code pipeline=<name>}
   * @param clock the clock of the commit-to-ack latency and the backlog read time
   * @param ticker what the pipeline measures its pauses, stalls, stages and stop deadline on
   */
  public Pipeline(
      PipelineSettings settings,
      Source source,
      Sink sink,
      MeterRegistry registry,
      Clock clock,
      Ticker ticker) {
    this(settings, source, sink, registry, clock, ticker, EventTracing.off());
  }

  /**
   * @param registry where the pipeline's meters are registered, tagged {@code pipeline=<name>}
   * @param clock the clock of the commit-to-ack latency and the backlog read time
   * @param ticker what the pipeline measures its pauses, stalls, stages and stop deadline on
   * @param tracing the spans of its claims and publishes
   */
  public Pipeline(
      PipelineSettings settings,
      Source source,
      Sink sink,
      MeterRegistry registry,
      Clock clock,
      Ticker ticker,
      EventTracing tracing) {
    this.settings = settings;
    this.source = source;
    this.sink = sink;
    this.stats = new PipelineStats(settings.name(), registry);
    this.ticker = ticker;
    this.state = new PipelineState(settings.name());
    this.backlog = new BacklogMonitor(settings.name(), source, registry, clock, state::stopping);
    this.router = Router.compile(settings.destinationTemplate());
    this.deadLetterRouter =
        settings.deadLetterDestination() == null
            ? null
            : Router.compile(settings.deadLetterDestination());
    RetryPolicy errorBackoff =
        new RetryPolicy(settings.reconnect(), () -> ThreadLocalRandom.current().nextDouble());
    SettlementPlanner planner =
        new SettlementPlanner(
            settings.retry().maxAttempts(),
            new RetryPolicy(
                settings.retry().backoff(), () -> ThreadLocalRandom.current().nextDouble()));
    this.gate = new SinkGate(settings.name(), sink, errorBackoff, PROBE_TIMEOUT, ticker);
    LedgerRecovery recovery = null; // exactly-once only
    if (sink instanceof TransactionalSink t) {
      if (settings.database().onPublish() == DatabaseSettings.OnPublish.POSITION) {
        throw new IllegalArgumentException(
            "pipeline "
                + settings.name()
                + ": on-publish = position does not keep exactly-once's ledger watermark: use"
                + " on-publish = mark or delete with exactly-once, or"
                + " sink.kafka.delivery = at-least-once");
      }
      LedgerWatermark watermark =
          source
              .ledgerWatermark()
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "pipeline "
                              + settings.name()
                              + ": exactly-once delivery needs a source that keeps the ledger"
                              + " watermark; this source does not (the polling and cdc sources"
                              + " do; or use sink.kafka.delivery = at-least-once)"));
      this.transactional = t;
      recovery = new LedgerRecovery(settings.name(), t, watermark, stats, LEDGER_READ_TIMEOUT);
    } else {
      this.transactional = null;
    }
    LaneContext lanes =
        new LaneContext(
            settings.name(),
            clock,
            ticker,
            source,
            sink,
            router,
            planner,
            gate,
            errorBackoff,
            stats,
            settings.batchSize(),
            deadLetterRouter,
            MessageForm.of(settings.cloudEvents(), sink.cloudEventsHeaderPrefix()),
            transactional,
            recovery,
            tracing);
    this.supervisor = new Supervisor(settings.lanes(), settings.stallTimeout(), lanes, state);
    registerGauges(registry);
  }

  private void registerGauges(MeterRegistry registry) {
    Tags tags = Tags.of("pipeline", settings.name());
    Gauge.builder("outbox.relay.active", this, p -> p.state.role() == Role.ACTIVE ? 1 : 0)
        .description("1 while this instance publishes for the pipeline, 0 on standby.")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    Gauge.builder("outbox.relay.sink.unavailable", this, p -> p.gate.isOpen() ? 0 : 1)
        .description("1 while the pipeline is paused by an unreachable broker.")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    Gauge.builder("outbox.relay.source.connected", this, p -> p.state.sourceConnected() ? 1 : 0)
        .description("1 when the source's last database call succeeded.")
        .tags(tags)
        .strongReference(true)
        .register(registry);
  }

  public String name() {
    return settings.name();
  }

  public PipelineStats stats() {
    return stats;
  }

  /** Whether this instance currently publishes for the pipeline. */
  public Role role() {
    return state.role();
  }

  /**
   * The destinations every event uses whatever its content: the routing template's when it has no
   * variables, and the dead-letter destination's likewise. Rows with their own {@code destination}
   * are not covered.
   */
  public Set<String> staticDestinations() {
    Set<String> destinations = new LinkedHashSet<>();
    if (router.staticDestination() != null) {
      destinations.add(router.staticDestination());
    }
    if (deadLetterRouter != null && deadLetterRouter.staticDestination() != null) {
      destinations.add(deadLetterRouter.staticDestination());
    }
    return destinations;
  }

  /**
   * Whether the source's last database call (activation, claim, backlog read) succeeded; false
   * until the first one did.
   */
  public boolean sourceConnected() {
    return state.sourceConnected();
  }

  /** The source's backlog figures of the last successful {@link #refreshBacklog()}, if any. */
  public Optional<Backlog> backlog() {
    return backlog.last();
  }

  /**
   * Reads fresh backlog figures from the source (the relay calls it every {@code
   * http.backlog-interval}); a failure marks the source disconnected until it answers again.
   */
  public void refreshBacklog() {
    if (state.stopping()) {
      return;
    }
    PipelineThreads.runAs(name(), () -> backlog.refresh().ifPresent(state::sourceAnswered));
  }

  /** What the source reported about its role; a standby that reports is connected. */
  public void roleReported(Role reported) {
    state.sourceAnswered(true);
  }

  /** Whether the sink is considered reachable (false while paused by an outage). */
  public boolean sinkAvailable() {
    return gate.isOpen();
  }

  /**
   * Who is told of a fatal failure (an {@link Error} in a lane or the supervisor: out of memory, a
   * missing class). The daemon exits non-zero on it, so that its supervisor restarts it.
   */
  public void onFatal(FatalListener listener) {
    state.onFatal(listener);
  }

  /** Why the pipeline died, or {@code null} while it is healthy; readiness reports it. */
  public String failure() {
    return state.failure();
  }

  /** Starts the pipeline in the background. */
  public synchronized void start() {
    if (supervisorThread != null) {
      throw new IllegalStateException("pipeline " + name() + " already started");
    }
    supervisorThread = PipelineThreads.thread(name(), "outbox-relay-" + name(), supervisor);
    supervisorThread.start();
  }

  /** {@code exactly-once} when the sink publishes in transactions, else {@code at-least-once}. */
  public String deliveryMode() {
    return transactional != null ? "exactly-once" : "at-least-once";
  }

  /** Exactly-once: the ledger's name, or {@code null}. */
  public String ledgerName() {
    return transactional != null ? transactional.ledgerName() : null;
  }

  /**
   * Stops claiming, lets in-flight batches finish and settle within {@code timeout}, abandons what
   * is left (released, claimed again later), then closes the sink and the source.
   */
  public void stop(Duration timeout) {
    PipelineThreads.runAs(name(), () -> stopWithin(timeout));
  }

  private void stopWithin(Duration timeout) {
    Deadline deadline = ticker.deadline(timeout);
    // Keep a fifth of the time for closing the sink and the source.
    state.stop(new Deadline(ticker, deadline.nanos() - timeout.toNanos() / 5));
    Thread s;
    synchronized (this) {
      s = supervisorThread;
    }
    if (s != null) {
      if (state.role() == Role.STANDBY) {
        s.interrupt(); // blocked in activate(): nothing in flight
      }
      try {
        s.join(Math.max(1, deadline.nanosLeft() / 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (s.isAlive()) {
        log.warn("pipeline {}: in-flight work did not finish in {}", name(), timeout);
        s.interrupt();
      }
    }
    gate.close();
    sink.close(deadline.left());
    source.close(deadline.left());
    log.info("pipeline {}: stopped ({})", name(), stats);
  }
}
