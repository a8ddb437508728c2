package io.outbox.source.cdc;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.LedgerWatermark;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.claim.ClaimWriter;
import io.outbox.source.cdc.claim.LaneReads;
import io.outbox.source.cdc.claim.StreamClaims;
import io.outbox.source.cdc.engine.StreamSession;
import io.outbox.source.cdc.engine.StreamSessions;
import io.outbox.source.cdc.lease.CdcLeaderLock;
import io.outbox.source.cdc.lease.DatabaseClock;
import io.outbox.source.cdc.lease.Fence;
import io.outbox.source.cdc.slot.SlotSetup;
import io.outbox.source.cdc.slot.SlotStatus;
import io.outbox.source.cdc.stream.ChangeStream;
import io.outbox.source.cdc.table.CatchUp;
import io.outbox.source.postgres.JdbcLedgerWatermark;
import io.outbox.source.postgres.LanePositions;
import io.outbox.source.postgres.OutboxLedger;
import io.outbox.source.postgres.OutboxTableCheck;
import io.outbox.source.postgres.OutboxVerdicts;
import io.outbox.source.postgres.SourceLifecycle;
import io.outbox.source.postgres.SourcePool;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams the outbox table's INSERTs from the write-ahead log (Debezium's embedded engine,
 * pgoutput). One instance per pipeline is active ({@link CdcLeaderLock}, a lease with an epoch that
 * fences every settlement and offset commit); it checks the slot against the stored offsets ({@link
 * SlotSetup}), then runs a {@link StreamSession} whose lanes the pipeline claims from. Verdicts are
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
  private final SourceLifecycle lifecycle;
  private final DatabaseClock clock;
  private final Ticker ticker;
  private final SlotSetup slot;
  private final LaneReads reads;
  private final StreamClaims claims;
  private final SlotStatus status;
  private final LedgerWatermark watermark;
  private final StreamSessions sessions;
  private final SourcePool<HikariDataSource> pool;

  CdcSource(PluginContext context, DatabaseSettings database, CdcSettings settings) {
    this.pipeline = database.pipeline() != null ? database.pipeline() : context.pipeline();
    this.lanes = context.lanes();
    this.database = database;
    this.settings = settings;
    this.tables =
        OutboxTables.of(database.table(), database.deadLetterTable())
            .withColumns(OutboxColumns.of(database.columns()));
    this.connections = new CdcConnections(database, settings, pipeline);
    this.ticker = context.ticker();
    this.lifecycle = new SourceLifecycle(pipeline, lanes, context.roles(), log, ticker);
    this.sessions = new StreamSessions(lifecycle.lock(), pipeline, settings.slotName());
    this.clock = new DatabaseClock(Objects.requireNonNull(context.clock(), "context.clock"));
    this.pool = new SourcePool<>(pipeline, settings.fenceWait(), () -> connections.pool(lanes));
    this.leader =
        new CdcLeaderLock(connections, tables, settings, pipeline, clock, pool::leaseLost, ticker);
    this.slot = new SlotSetup(settings, database, tables, pipeline, connections, leader, ticker);
    this.status = new SlotStatus(settings, tables, pipeline, connections, slot.creation());
    this.reads =
        new LaneReads(pipeline, tables, pool::get, leader, clock, ticker, this::checkActive);
    OutboxLedger ledger =
        new OutboxLedger(
            pool::get,
            tables,
            pipeline,
            database.onPublish() == OnPublish.DELETE,
            leader::ledgerFence);
    this.watermark = new JdbcLedgerWatermark(pipeline, ledger);
    ClaimWriter writer =
        new ClaimWriter(
            pipeline,
            tables,
            new OutboxVerdicts(tables),
            pool::get,
            leader,
            ledger,
            database.onPublish());
    this.claims = new StreamClaims(lifecycle.claims(), reads, writer, this::checkActive, ticker);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The pipeline reads the ledger after {@link #activate()} returned and before any lane claims;
   * the stream has started by then and may hold events the ledger settles, but every claim reads
   * its events' rows first ({@link io.outbox.source.cdc.claim.CurrentRows}) and drops those already
   * published.
   */
  @Override
  public Optional<LedgerWatermark> ledgerWatermark() {
    return Optional.of(watermark);
  }

  /**
   * {@inheritDoc}
   *
   * <p>That the database's ordinary sessions (lease, checks, settlements) are not pooled by
   * transaction ({@link io.outbox.source.postgres.SessionPoolingCheck}); then that the outbox and
   * dead-letter tables have the columns the source reads and settles, under the names {@code
   * columns.*} gives them ({@link OutboxTableCheck}, one line per mismatch), for tables that exist.
   * The stream's replication connection cannot go through such a pooler at all; the slot and the
   * publication are checked at activation.
   */
  @Override
  public List<String> schemaProblems() {
    return OutboxTableCheck.startUpProblems(
        () -> connections.dedicated("start-up check"),
        settings.connectionTimeout(),
        tables,
        database,
        pipeline);
  }

  @Override
  public void activate() throws InterruptedException {
    sessions.awaitNoEngineLeft();
    try (Connection c = connections.dedicated("check")) {
      slot.preflight(c);
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
          lifecycle.report(Role.STANDBY);
        },
        lifecycle::closed);
    try {
      leavePositions();
      CatchUp.Bound catchUpTo = slot.prepare(lifecycle::closed);
      StreamSession s =
          new StreamSession(
              settings,
              connections,
              tables,
              pipeline,
              lanes,
              clock,
              ticker,
              leader::checkFence,
              leader::held);
      s.catchUp(catchUpTo);
      synchronized (lifecycle.lock()) {
        if (lifecycle.closed()) {
          throw new InterruptedException("pipeline " + pipeline + ": source closed");
        }
        pool.open();
        sessions.started(s);
        reads.clear();
      }
      s.start();
    } catch (RuntimeException | InterruptedException e) {
      StreamSession started = sessions.takeActive();
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
    lifecycle.report(Role.ACTIVE);
    lifecycle.startRetention(
        tables, database, () -> connections.dedicated("retention"), leader::held);
  }

  /**
   * A pipeline that settled by position before (the polling source, {@code on-publish = position})
   * has its positions' rows marked or deleted before the catch-up reads the rows left unpublished,
   * which would otherwise publish them again.
   */
  private void leavePositions() {
    try (Connection c = connections.dedicated("check")) {
      c.setAutoCommit(false);
      new LanePositions(tables).leave(c, pipeline, database.onPublish() == OnPublish.DELETE);
      c.commit();
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": leaving settlement by position on "
              + connections.where()
              + " failed: "
              + e.getMessage(),
          e);
    }
  }

  @Override
  public Claim claim(int lane, int maxEvents, Duration maxWait) throws InterruptedException {
    lifecycle.claims().checkArguments(lane, maxEvents);
    return claims.claim(sessions.forClaim(), lane, maxEvents, maxWait);
  }

  /** A failed engine or a lost leader lock ends the session; the pipeline activates again. */
  private void checkActive(StreamSession s) {
    if (lifecycle.closed()) {
      return;
    }
    String failure = s.failure();
    boolean held = leader.held();
    if (failure == null && held) {
      return;
    }
    sessions.ended(s);
    // The engine first, and all of it: it must not take the slot back once another instance
    // streams it (awaitNoEngineLeft refuses the next activation until it is gone).
    if (held) {
      s.stop(StreamSession.STOP_TIMEOUT); // the engine failed: stopped before it starts again
    } else {
      // The lease is lost, perhaps with the database out of reach: stopping the engine may take
      // up to its stop timeout (it cannot tell that its replication connection ended), so this
      // instance stands by meanwhile (issue #29 point 8).
      s.stopInBackground();
    }
    leader.release();
    lifecycle.report(Role.STANDBY);
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
  Fence fence() {
    return leader::checkFence;
  }

  /** Stops renewing the lease while keeping every session open, as a frozen process (tests). */
  void stopRenewingLease() {
    leader.stopRenewing();
  }

  /** What is left of this instance's newest engine, stopped or not (tests); empty when gone. */
  List<String> engineLeft() {
    return sessions.engineLeft();
  }

  /** The active session's stream, or {@code null} (tests). */
  ChangeStream<?> activeStream() {
    StreamSession s = sessions.active();
    return s == null ? null : s.stream();
  }

  /** How many events the active session holds in memory (diagnostics and tests). */
  int inMemory() {
    return sessions.inMemory();
  }

  /**
   * {@inheritDoc}
   *
   * <p>With the slot's retained WAL once the slot exists ({@link SlotStatus#backlog}).
   */
  @Override
  public Optional<Backlog> backlog() {
    return Optional.of(lifecycle.withRetentionFigures(status.backlog()));
  }

  @Override
  public void close(Duration timeout) {
    SourceLifecycle.Closing<StreamSession> closing = lifecycle.close(timeout, sessions::takeActive);
    if (closing == null) {
      return;
    }
    slot.creation().cancel();
    closing.stopRetention();
    StreamSession s = closing.taken();
    if (s != null) {
      s.stream().close();
      closing.awaitClaimsEnded("they are streamed again");
      s.stop(closing.deadline().left());
    }
    leader.close();
    pool.close();
    closing.standbyIfActive();
  }
}
