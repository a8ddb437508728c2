package io.outbox.relay.pipeline;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.LedgerException;
import io.outbox.relay.spi.LedgerWatermark;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.TransactionalSink;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one pipeline: waits (standby) until its source makes this instance active, then runs its
 * lanes until it stops or loses the active role. Knows no SQL and no broker API.
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
  private final Clock clock;
  private final RetryPolicy errorBackoff;
  private final SinkGate gate;
  private final SettlementPlanner planner;
  private final Router router;
  private final Router deadLetterRouter;
  private final TransactionalSink transactional; // exactly-once; null when at least once
  private final LedgerRecovery recovery; // exactly-once; null when at least once
  private final Object monitor = new Object();

  private Thread supervisor;
  private volatile boolean stopping;
  private volatile long abandonAtNanos;
  private volatile boolean abandonDeadlineSet; // abandonAtNanos is meaningful
  // The sink gate's reopenings when this instance last gave the role up for a sink stall, and when.
  private long sinkYieldReopenings = -1; // supervisor thread only
  private long sinkYieldNanos;
  private volatile boolean demoted;
  private volatile Role role = Role.STANDBY;
  private volatile boolean sourceConnected;
  private volatile String failure;
  private volatile FatalListener fatalListener = (pipeline, error) -> {};

  /** Told when a pipeline meets an {@link Error} it cannot go on from. */
  @FunctionalInterface
  public interface FatalListener {
    void failed(String pipeline, Throwable error);
  }

  /** A pipeline whose meters go nowhere (tests, tools). */
  public Pipeline(PipelineSettings settings, Source source, Sink sink) {
    this(settings, source, sink, new SimpleMeterRegistry(), Clock.systemUTC());
  }

  /**
   * @param registry where the pipeline's meters are registered, tagged {@code pipeline=<name>}
   * @param clock the clock of the commit-to-ack latency and the backlog read time
   */
  public Pipeline(
      PipelineSettings settings, Source source, Sink sink, MeterRegistry registry, Clock clock) {
    this.settings = settings;
    this.source = source;
    this.sink = sink;
    this.clock = clock;
    this.stats = new PipelineStats(settings.name(), registry);
    this.backlog = new BacklogMonitor(settings.name(), source, registry, clock, () -> stopping);
    this.router = Router.compile(settings.destinationTemplate());
    this.deadLetterRouter =
        settings.deadLetterDestination() == null
            ? null
            : Router.compile(settings.deadLetterDestination());
    this.errorBackoff =
        new RetryPolicy(settings.reconnect(), () -> ThreadLocalRandom.current().nextDouble());
    this.planner =
        new SettlementPlanner(
            settings.retry().maxAttempts(),
            new RetryPolicy(
                settings.retry().backoff(), () -> ThreadLocalRandom.current().nextDouble()));
    this.gate = new SinkGate(settings.name(), sink, errorBackoff, PROBE_TIMEOUT);
    if (sink instanceof TransactionalSink t) {
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
      this.recovery = new LedgerRecovery(settings.name(), t, watermark, stats, LEDGER_READ_TIMEOUT);
    } else {
      this.transactional = null;
      this.recovery = null;
    }
    registerGauges(registry);
  }

  private void registerGauges(MeterRegistry registry) {
    Tags tags = Tags.of("pipeline", settings.name());
    Gauge.builder("outbox.relay.active", this, p -> p.role == Role.ACTIVE ? 1 : 0)
        .description("1 while this instance publishes for the pipeline, 0 on standby.")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    Gauge.builder("outbox.relay.sink.unavailable", this, p -> p.gate.isOpen() ? 0 : 1)
        .description("1 while the pipeline is paused by an unreachable broker.")
        .tags(tags)
        .strongReference(true)
        .register(registry);
    Gauge.builder("outbox.relay.source.connected", this, p -> p.sourceConnected ? 1 : 0)
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
    return role;
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
    return sourceConnected;
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
    if (stopping) {
      return;
    }
    backlog.refresh().ifPresent(answered -> sourceConnected = answered);
  }

  /** What the source reported about its role; a standby that reports is connected. */
  public void roleReported(Role reported) {
    sourceConnected = true;
  }

  Clock clock() {
    return clock;
  }

  /** The pipeline as its lanes see it. */
  private final LaneHost host =
      new LaneHost() {
        @Override
        public String name() {
          return Pipeline.this.name();
        }

        @Override
        public Clock clock() {
          return clock;
        }

        @Override
        public boolean keepClaiming() {
          return Pipeline.this.keepClaiming();
        }

        @Override
        public boolean abandonInFlight() {
          return Pipeline.this.abandonInFlight();
        }

        @Override
        public boolean sleepUnlessStopping(Duration pause) {
          return Pipeline.this.sleepUnlessStopping(pause);
        }

        @Override
        public void sourceAnswered(boolean answered) {
          sourceConnected = answered;
        }

        @Override
        public void leadershipLost(String why) {
          Pipeline.this.leadershipLost(why);
        }

        @Override
        public void fatal(String where, Throwable error) {
          Pipeline.this.fatal(where, error);
        }
      };

  /** Whether the sink is considered reachable (false while paused by an outage). */
  public boolean sinkAvailable() {
    return gate.isOpen();
  }

  /**
   * Who is told of a fatal failure (an {@link Error} in a lane or the supervisor: out of memory, a
   * missing class). The daemon exits non-zero on it, so that its supervisor restarts it.
   */
  public void onFatal(FatalListener listener) {
    this.fatalListener = listener;
  }

  /** Why the pipeline died, or {@code null} while it is healthy; readiness reports it. */
  public String failure() {
    return failure;
  }

  /**
   * An {@link Error} ended a lane or the supervisor: the pipeline stops claiming (its claims in
   * flight roll back and are claimed again), readiness turns false, and the fatal listener decides
   * the process's fate.
   */
  void fatal(String where, Throwable error) {
    boolean first;
    synchronized (monitor) {
      first = failure == null;
      if (first) {
        failure = where + ": " + Lane.oneLine(error);
      }
      demoted = true;
      monitor.notifyAll();
    }
    if (first) {
      log.error("pipeline {}: fatal failure in {}; the pipeline stops", name(), where, error);
      fatalListener.failed(name(), error);
    }
  }

  /** Starts the pipeline in the background. */
  public synchronized void start() {
    if (supervisor != null) {
      throw new IllegalStateException("pipeline " + name() + " already started");
    }
    supervisor = new Thread(this::supervise, "outbox-relay-" + name());
    supervisor.start();
  }

  private void supervise() {
    try {
      superviseUntilStopped();
    } catch (Error e) {
      fatal("supervisor", e);
    }
  }

  private void superviseUntilStopped() {
    int failures = 0;
    while (!stopping && failure == null) {
      try {
        log.info("pipeline {}: waiting to become the active instance", name());
        source.activate();
        sourceConnected = true;
        failures = 0;
      } catch (InterruptedException e) {
        return;
      } catch (SourceException e) {
        if (stopping) {
          // stop() interrupts a standby's activate(); a JDBC call it cut short fails this way.
          return;
        }
        failures++;
        sourceConnected = false;
        Duration pause = errorBackoff.delayAfter(failures);
        log.warn(
            "pipeline {}: cannot start reading, retrying in {} ms: {}",
            name(),
            pause.toMillis(),
            Lane.oneLine(e));
        if (!sleepUnlessStopping(pause)) {
          return;
        }
        continue;
      }
      if (stopping) {
        return;
      }
      if (recovery != null && !settleInDoubt()) {
        continue;
      }
      runLanes();
    }
  }

  /**
   * Exactly-once, on activation: fences the instance before this one in the broker and settles what
   * it committed without settling, before any lane claims. Retries with backoff while the broker
   * cannot be reached.
   *
   * @return {@code true} when the lanes may run; {@code false} when the role was lost, the ledger
   *     cannot be trusted (the pipeline fails), or the pipeline stops
   */
  private boolean settleInDoubt() {
    java.util.Set<Integer> lanes = new java.util.TreeSet<>();
    for (int i = 0; i < settings.lanes(); i++) {
      lanes.add(i);
    }
    int failures = 0;
    while (!stopping) {
      try {
        recovery.recover(lanes, true);
        return true;
      } catch (LeadershipLostException e) {
        log.warn(
            "pipeline {}: lost the active role while settling the ledger: {}",
            name(),
            e.getMessage());
        return false;
      } catch (LedgerException e) {
        fatal("the ledger", e);
        return false;
      } catch (RuntimeException e) {
        failures++;
        Duration pause = errorBackoff.delayAfter(failures);
        log.warn(
            "pipeline {}: cannot fence the earlier instance or read the ledger, retrying in {} ms:"
                + " {}",
            name(),
            pause.toMillis(),
            Lane.oneLine(e));
        if (!sleepUnlessStopping(pause)) {
          return false;
        }
      }
    }
    return false;
  }

  /** {@code exactly-once} when the sink publishes in transactions, else {@code at-least-once}. */
  public String deliveryMode() {
    return transactional != null ? "exactly-once" : "at-least-once";
  }

  /** Exactly-once: the ledger's name, or {@code null}. */
  public String ledgerName() {
    return transactional != null ? transactional.ledgerName() : null;
  }

  private void runLanes() {
    role = Role.ACTIVE;
    demoted = false;
    log.info(
        "pipeline {}: active, {} lane(s), batches of up to {} events",
        name(),
        settings.lanes(),
        settings.batchSize());
    List<Thread> lanes = new ArrayList<>();
    List<Lane> running = new ArrayList<>();
    LaneContext shared =
        new LaneContext(
            source,
            sink,
            router,
            planner,
            gate,
            errorBackoff,
            stats,
            settings.batchSize(),
            deadLetterRouter,
            transactional,
            recovery);
    for (int i = 0; i < settings.lanes(); i++) {
      Lane lane = new Lane(i, host, shared);
      Thread t = new Thread(lane, "outbox-relay-" + name() + "-lane-" + i);
      lanes.add(t);
      running.add(lane);
      t.start();
    }
    watchForStalls(lanes, running);
    for (Thread t : lanes) {
      joinUninterruptibly(t);
    }
    role = Role.STANDBY;
    if (demoted && !stopping) {
      log.warn("pipeline {}: no longer the active instance, standing by", name());
    }
    // The lanes are gone; a lost lead must not read as "stop" to the supervisor's retries
    // (sleepUnlessStopping), which would end it for good at its first failed activation.
    demoted = false;
  }

  /**
   * While the lanes run: a lane that made no progress for {@code stall-timeout} (stuck in a
   * database call, or paused by a sink this instance cannot reach) makes the pipeline offer the
   * active role to a standby ({@link Source#yieldLeadership}), again every {@code stall-timeout}
   * while the stall lasts (a standby may connect meanwhile).
   *
   * <p>A sink stall is offered once per outage of this instance's sink: when the standby it was
   * handed to cannot reach the broker either, it hands the role back, and this instance keeps it
   * until its sink has come back (or ten stall timeouts passed) instead of handing it to and fro.
   */
  private void watchForStalls(List<Thread> threads, List<Lane> lanes) {
    long limit = settings.stallTimeout().toNanos();
    long offeredAt = 0;
    boolean offered = false;
    while (keepClaiming() && threads.stream().anyMatch(Thread::isAlive)) {
      long now = System.nanoTime();
      Lane stalled = null;
      for (Lane lane : lanes) {
        if (lane.stalledFor(now) >= limit) {
          stalled = lane;
          break;
        }
      }
      if (stalled == null) {
        offered = false;
      } else if (!offered || now - offeredAt >= limit) {
        offered = true;
        offeredAt = now;
        if (offerActiveRole(lanes.indexOf(stalled), stalled, now)) {
          return;
        }
      }
      synchronized (monitor) {
        if (!keepClaiming()) {
          return;
        }
        try {
          monitor.wait(Math.max(1, Math.min(1000, limit / 4_000_000)));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** Offers the active role to a standby for a stalled lane; whether it was given up. */
  private boolean offerActiveRole(int index, Lane stalled, long now) {
    String step = stalled.step();
    String why =
        "lane "
            + index
            + " made no progress for "
            + settings.stallTimeout().toMillis()
            + " ms ("
            + step
            + ")";
    boolean sinkStall = !gate.isOpen() || Lane.PUBLISHING.equals(step);
    if (sinkStall
        && sinkYieldReopenings == gate.reopenings()
        && now - sinkYieldNanos < 10 * settings.stallTimeout().toNanos()) {
      log.warn(
          "pipeline {}: {}; the role was handed over once already for this sink outage and came"
              + " back (no instance reaches the broker), carrying on",
          name(),
          why);
      return false;
    }
    if (source.yieldLeadership(settings.stallTimeout(), why)) {
      if (sinkStall) {
        sinkYieldReopenings = gate.reopenings();
        sinkYieldNanos = now;
      }
      leadershipLost("gave the active role up: " + why);
      return true;
    }
    log.warn("pipeline {}: {}; no standby to hand over to, carrying on", name(), why);
    return false;
  }

  /** Lanes keep claiming while this is true. */
  boolean keepClaiming() {
    return !stopping && !demoted;
  }

  /** Whether in-flight batches must be given up now (the stop deadline passed). */
  boolean abandonInFlight() {
    // A flag, not Long.MAX_VALUE as "never": System.nanoTime() may be negative, and the
    // difference would wrap.
    return abandonDeadlineSet && System.nanoTime() - abandonAtNanos >= 0;
  }

  void leadershipLost(String why) {
    synchronized (monitor) {
      if (!demoted) {
        log.warn("pipeline {}: lost the active role: {}", name(), why);
      }
      demoted = true;
      monitor.notifyAll();
    }
  }

  /** Sleeps unless the pipeline stops first; returns false when stopping. */
  boolean sleepUnlessStopping(Duration d) {
    long until = System.nanoTime() + d.toNanos();
    synchronized (monitor) {
      while (!stopping && !demoted) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          return true;
        }
        try {
          monitor.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    return false;
  }

  /**
   * Stops claiming, lets in-flight batches finish and settle within {@code timeout}, abandons what
   * is left (released, claimed again later), then closes the sink and the source.
   */
  public void stop(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    // Keep a fifth of the time for closing the sink and the source.
    abandonAtNanos = deadline - timeout.toNanos() / 5;
    abandonDeadlineSet = true;
    stopping = true;
    synchronized (monitor) {
      monitor.notifyAll();
    }
    Thread s;
    synchronized (this) {
      s = supervisor;
    }
    if (s != null) {
      if (role == Role.STANDBY) {
        s.interrupt(); // blocked in activate(): nothing in flight
      }
      try {
        s.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (s.isAlive()) {
        log.warn("pipeline {}: in-flight work did not finish in {}", name(), timeout);
        s.interrupt();
      }
    }
    gate.close();
    Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    sink.close(left);
    source.close(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    log.info("pipeline {}: stopped ({})", name(), stats);
  }

  private static void joinUninterruptibly(Thread t) {
    boolean interrupted = false;
    while (t.isAlive()) {
      try {
        t.join();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
