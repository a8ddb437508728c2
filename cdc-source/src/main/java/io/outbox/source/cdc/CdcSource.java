package io.outbox.source.cdc;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.LedgerWatermark;
import io.outbox.relay.spi.OutstandingClaims;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.support.JdbcLedgerWatermark;
import io.outbox.relay.spi.support.RoleReporter;
import io.outbox.schema.CloseDeadline;
import io.outbox.schema.OutboxStatus;
import io.outbox.schema.OutboxTables;
import io.outbox.schema.OutboxVerdicts;
import io.outbox.schema.RetentionJob;
import io.outbox.schema.RetentionPolicy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams the outbox table's INSERTs from the write-ahead log (Debezium's embedded engine,
 * pgoutput). One instance per pipeline is active ({@link CdcLeaderLock}, a lease with an epoch that
 * fences every settlement and offset commit); it checks the slot against the stored offsets ({@link
 * SlotGuard}), then runs a {@link StreamSession} whose lanes the pipeline claims from. Verdicts are
 * written to the outbox with the polling source's statements ({@link OutboxVerdicts}), so operators
 * see one model whatever the source.
 */
final class CdcSource implements Source {

  private static final Logger log = LoggerFactory.getLogger(CdcSource.class);

  private final String pipeline;
  private final int lanes;
  private final DatabaseSettings database;
  private final CdcSettings settings;
  private final OutboxTables tables;
  private final CdcConnections connections;
  private final CdcLeaderLock leader;
  private final RoleReporter roles;
  private final DatabaseClock clock;
  private final OutstandingClaims outstanding;
  private final SlotSetup slot;
  private final LaneReads reads;
  private final ClaimWriter writer;
  private final SlotStatus status;
  private final CdcLedger ledger;
  private final LedgerWatermark watermark;
  private final Object lifecycle = new Object();
  private volatile StreamSession session;
  private StreamSession last; // guarded by lifecycle: the newest session, stopped or not
  private volatile HikariDataSource pool;
  private volatile boolean closed;
  private RetentionJob retention; // guarded by lifecycle

  CdcSource(PluginContext context, DatabaseSettings database, CdcSettings settings) {
    this.pipeline = database.pipeline() != null ? database.pipeline() : context.pipeline();
    this.lanes = context.lanes();
    this.database = database;
    this.settings = settings;
    this.tables = OutboxTables.of(database.table(), database.deadLetterTable());
    this.connections = new CdcConnections(database, settings, pipeline);
    this.roles = new RoleReporter(context.roles(), lifecycle);
    this.clock = new DatabaseClock(context.clock() != null ? context.clock() : Clock.systemUTC());
    this.leader = new CdcLeaderLock(connections, tables, settings, pipeline, clock);
    this.outstanding = new OutstandingClaims(lanes, pipeline);
    this.slot = new SlotSetup(settings, database, tables, pipeline, connections, leader);
    this.status = new SlotStatus(settings, tables, pipeline, connections, slot.creation());
    this.reads = new LaneReads(pipeline, tables, () -> pool, leader, clock, this::checkActive);
    this.ledger =
        new CdcLedger(
            () -> pool, leader, tables, pipeline, database.onPublish() == OnPublish.DELETE);
    this.watermark = new JdbcLedgerWatermark(pipeline, ledger);
    this.writer =
        new ClaimWriter(
            pipeline,
            tables,
            new OutboxVerdicts(tables),
            () -> pool,
            leader,
            ledger,
            database.onPublish());
  }

  /**
   * {@inheritDoc}
   *
   * <p>The pipeline reads the ledger after {@link #activate()} returned and before any lane claims;
   * the stream has started by then and may hold events the ledger settles, but every claim reads
   * its events' rows first ({@link CurrentRows}) and drops those already published.
   */
  @Override
  public Optional<LedgerWatermark> ledgerWatermark() {
    return Optional.of(watermark);
  }

  @Override
  public void activate() throws InterruptedException {
    awaitNoEngineLeft();
    try (Connection c = connections.dedicated("check")) {
      new SlotGuard(settings, tables, pipeline, connections.where()).preflight(c);
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": cannot check the database on "
              + connections.where()
              + ": "
              + e.getMessage(),
          e);
    }
    leader.acquire(
        () -> {
          log.info(
              "pipeline {}: another instance streams slot {}; standing by, checking every {} ms",
              pipeline,
              settings.slotName(),
              settings.standbyCheckInterval().toMillis());
          report(Role.STANDBY);
        },
        () -> closed);
    try {
      CatchUp.Bound catchUpTo = slot.prepare(() -> closed);
      StreamSession s =
          new StreamSession(
              settings,
              connections,
              tables,
              pipeline,
              lanes,
              clock,
              leader::checkFence,
              leader::held);
      s.catchUp(catchUpTo);
      synchronized (lifecycle) {
        if (closed) {
          throw new InterruptedException("pipeline " + pipeline + ": source closed");
        }
        if (pool == null) {
          pool = connections.pool(lanes);
        }
        session = s;
        last = s;
        reads.clear();
      }
      s.start();
    } catch (RuntimeException | InterruptedException e) {
      StreamSession started;
      synchronized (lifecycle) {
        started = session;
        session = null;
      }
      if (started != null) {
        started.stop(StreamSession.STOP_TIMEOUT);
        slot.endAbandonedEngine();
      }
      leader.release();
      throw e;
    }
    log.info(
        "pipeline {}: this instance is now the active one for slot {}",
        pipeline,
        settings.slotName());
    report(Role.ACTIVE);
    startRetention();
  }

  /**
   * An instance never takes the active role while an engine of its own still runs: that engine's
   * task reconnects by itself and would take the slot back from whichever instance streams it.
   *
   * @throws SourceException when the previous session's engine is not gone ({@link
   *     StreamSession#engineLeft}) after {@link StreamSession#STOP_TIMEOUT}; the pipeline tries
   *     again later
   */
  private void awaitNoEngineLeft() {
    StreamSession previous;
    synchronized (lifecycle) {
      previous = last;
    }
    if (previous == null || previous.engineGone()) {
      return;
    }
    if (!previous.stop(StreamSession.STOP_TIMEOUT)) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": the change stream engine of this instance's previous session is not gone ("
              + String.join("; ", previous.engineLeft())
              + "); not taking the active role while it could take slot "
              + settings.slotName()
              + " back");
    }
  }

  /**
   * Starts the pipeline's retention once, on first activation; it deletes only while this instance
   * holds the leader lock, on its own session.
   */
  private void startRetention() {
    DatabaseSettings.Retention r = database.retention();
    synchronized (lifecycle) {
      if (retention != null || closed || !r.enabled()) {
        return;
      }
      retention =
          RetentionJob.start(
              tables,
              pipeline,
              new RetentionPolicy(r.published(), r.deadLetters(), r.batchSize(), r.interval()),
              () -> connections.dedicated("retention"),
              leader::held);
    }
  }

  @Override
  public Claim claim(int lane, int maxEvents, Duration maxWait) throws InterruptedException {
    outstanding.checkArguments(lane, maxEvents);
    StreamSession s = session;
    if (s == null) {
      synchronized (lifecycle) {
        if (last != null) {
          // Another lane (or the session's watch) ended the session: every lane stands down.
          throw new LeadershipLostException(
              "pipeline " + pipeline + ": the change stream of this instance stopped");
        }
      }
      throw new IllegalStateException("pipeline " + pipeline + ": claim() before activate()");
    }
    outstanding.begin(lane);
    boolean handedOut = false;
    try {
      checkActive(s);
      long deadline = System.nanoTime() + Math.max(0, maxWait.toNanos());
      long queryNanos = 0;
      while (true) {
        reads.readBackParked(s, lane);
        Duration wait = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
        List<ChangeStream.Item> items = s.stream().take(lane, maxEvents, wait);
        if (items.isEmpty()) {
          if (s.stream().parkedToRead(lane) != null && System.nanoTime() < deadline) {
            continue; // a held-back key was released: its parked rows come first
          }
          checkActive(s);
          return Claim.empty();
        }
        long started = System.nanoTime();
        items = reads.current(s, lane, items);
        queryNanos += System.nanoTime() - started;
        if (!items.isEmpty()) {
          handedOut = true;
          return new CdcClaim(writer, s.stream(), lane, items, queryNanos, this::ended);
        }
        // Every event taken was final already (streamed again after a restart): take the next.
      }
    } finally {
      if (!handedOut) {
        ended(lane);
      }
    }
  }

  /** A failed engine or a lost leader lock ends the session; the pipeline activates again. */
  private void checkActive(StreamSession s) {
    if (closed) {
      return;
    }
    String failure = s.failure();
    boolean held = leader.held();
    if (failure == null && held) {
      return;
    }
    synchronized (lifecycle) {
      if (session == s) {
        session = null;
      }
    }
    // The engine first, and all of it: it must not take the slot back once another instance
    // streams it (awaitNoEngineLeft refuses the next activation until it is gone).
    s.stop(StreamSession.STOP_TIMEOUT);
    leader.release();
    report(Role.STANDBY);
    throw new LeadershipLostException(
        "pipeline "
            + pipeline
            + ": "
            + (held
                ? "the change stream stopped (" + failure + "); starting it again"
                : "this instance lost its leader lock for slot "
                    + settings.slotName()
                    + "; another instance may be active"));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Only when another instance's leader session is connected to take over: alone, this instance
   * stays active.
   */
  @Override
  public boolean yieldLeadership(Duration pause, String why) {
    if (!leader.held()
        || !new OutboxStatus(tables)
            .handOver(() -> connections.dedicated("yield"), pipeline, pause, why)) {
      return false;
    }
    leader.yieldFor(pause);
    return true;
  }

  /**
   * The WAL the pipeline's slot keeps from being recycled ({@link SlotStatus#retainedWalBytes}).
   */
  long retainedWalBytes() {
    return status.retainedWalBytes();
  }

  /** The check every settlement and offset commit of this instance makes (tests). */
  PostgresOffsetStore.Fence fence() {
    return leader::checkFence;
  }

  /** Stops renewing the lease while keeping every session open, as a frozen process (tests). */
  void stopRenewingLease() {
    leader.stopRenewing();
  }

  /** What is left of this instance's newest engine, stopped or not (tests); empty when gone. */
  List<String> engineLeft() {
    StreamSession s;
    synchronized (lifecycle) {
      s = last;
    }
    return s == null ? List.of() : s.engineLeft();
  }

  /** The active session's stream, or {@code null} (tests). */
  ChangeStream<?> activeStream() {
    StreamSession s = session;
    return s == null ? null : s.stream();
  }

  /** How many events the active session holds in memory (diagnostics and tests). */
  int inMemory() {
    StreamSession s = session;
    return s == null ? 0 : s.stream().size();
  }

  /**
   * {@inheritDoc}
   *
   * <p>With the slot's retained WAL once the slot exists ({@link SlotStatus#backlog}).
   */
  @Override
  public Optional<Backlog> backlog() {
    return Optional.of(status.backlog());
  }

  @Override
  public void close(Duration timeout) {
    CloseDeadline deadline = new CloseDeadline(timeout);
    StreamSession s;
    RetentionJob stoppingRetention;
    synchronized (lifecycle) {
      if (closed) {
        return;
      }
      closed = true;
      s = session;
      session = null;
      stoppingRetention = retention;
      retention = null;
    }
    slot.creation().cancel();
    deadline.stop(stoppingRetention);
    if (s != null) {
      s.stream().close();
      awaitClaimsEnded(deadline.nanos());
      s.stop(deadline.left());
    }
    leader.close();
    HikariDataSource p = pool;
    if (p != null) {
      p.close();
    }
    roles.standbyIfActive();
  }

  /** Lets claims in flight settle, until the deadline. */
  private void awaitClaimsEnded(long deadline) {
    if (!outstanding.awaitNone(deadline)) {
      log.warn("pipeline {}: closing with claims still open; they are streamed again", pipeline);
    }
  }

  private void ended(int lane) {
    outstanding.end(lane);
  }

  private void report(Role role) {
    roles.report(role);
  }
}
