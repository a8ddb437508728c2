package io.outbox.source.polling;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxColumns;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.LedgerWatermark;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.postgres.JdbcLedgerWatermark;
import io.outbox.source.postgres.OutboxLedger;
import io.outbox.source.postgres.OutboxTableCheck;
import io.outbox.source.postgres.RetentionJob;
import io.outbox.source.postgres.SessionPoolingCheck;
import io.outbox.source.postgres.SourceLifecycle;
import io.outbox.source.postgres.SourcePool;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the outbox by polling: each claim is a transaction that takes its lane's advisory lock and
 * locks the lane's next claimable rows ({@code FOR UPDATE}, under the lane's advisory lock);
 * notifications from the insert trigger wake idle lanes (sent only while no lane is busy, {@link
 * WakeGate}), the poll interval is the fallback. One instance per pipeline is active at a time
 * ({@link LeaderLock}); it also runs the pipeline's retention ({@link RetentionJob}) while active.
 */
final class PollingSource implements Source {

  private static final Logger log = LoggerFactory.getLogger(PollingSource.class);

  private final String pipeline;
  private final int lanes;
  private final DatabaseSettings database;
  private final PollingSettings settings;
  private final TableNames tables;
  private final Connections connections;
  private final WakeUps wakeUps = new WakeUps();
  private final LeaderLock leader;
  private final BacklogReader backlog;
  private final SourceLifecycle lifecycle;
  private final LanePolls polls;
  private volatile ClaimTransactions claims;
  private final SourcePool<HikariDataSource> pool;
  private NotificationListener listener; // guarded by lifecycle.lock()
  private volatile WakeGate gate; // set once, guarded by lifecycle.lock()
  private final LedgerWatermark ledger;
  private final Ticker ticker;

  PollingSource(PluginContext context, DatabaseSettings database, PollingSettings settings) {
    this.pipeline = database.pipeline() != null ? database.pipeline() : context.pipeline();
    this.lanes = context.lanes();
    this.ticker = context.ticker();
    this.database = database;
    this.settings = settings;
    this.tables =
        TableNames.of(
            database.table(), database.deadLetterTable(), OutboxColumns.of(database.columns()));
    this.connections = new Connections(database, settings, pipeline);
    this.lifecycle = new SourceLifecycle(pipeline, lanes, context.roles(), log, ticker);
    lifecycle.claims().onResume(wakeUps::wakeAll);
    this.pool = new SourcePool<>(pipeline, settings.fenceWait(), () -> connections.pool(lanes));
    this.leader =
        new LeaderLock(
            connections,
            tables,
            settings,
            wakeUps,
            lifecycle::report,
            pool::leaseLost,
            pipeline,
            tables.displayTable(),
            ticker);
    this.polls =
        new LanePolls(
            settings,
            lanes,
            lifecycle.claims(),
            wakeUps,
            leader,
            () -> gate,
            lifecycle::closed,
            pipeline,
            tables.displayTable(),
            ticker);
    this.backlog = new BacklogReader(connections, tables, pipeline);
    this.ledger =
        new JdbcLedgerWatermark(
            pipeline,
            new OutboxLedger(
                pool::get,
                tables.outboxTables(),
                pipeline,
                database.onPublish() == DatabaseSettings.OnPublish.DELETE,
                leader::ledgerFence));
  }

  @Override
  public Optional<LedgerWatermark> ledgerWatermark() {
    return Optional.of(ledger);
  }

  @Override
  public Optional<Backlog> backlog() {
    return backlog.read().map(lifecycle::withRetentionFigures);
  }

  @Override
  public void activate() throws InterruptedException {
    leader.acquire(lifecycle::closed);
    try {
      synchronized (lifecycle.lock()) {
        if (lifecycle.closed()) {
          throw new InterruptedException("pipeline " + pipeline + ": source closed");
        }
        HikariDataSource claimPool = pool.open();
        PayloadFormat format =
            OutboxTableCheck.inspect(
                claimPool, tables.outboxTables(), database, pipeline, connections.safeUrl());
        OutboxSql sql = new OutboxSql(tables, format, lanes);
        claims =
            new ClaimTransactions(
                claimPool,
                sql,
                format,
                tables,
                lanes,
                database.onPublish(),
                pipeline,
                connections.safeUrl(),
                lifecycle.claims(),
                leader.lease(),
                ticker);
        claims.prepareSettlement();
        log.info(
            "pipeline {}: polling {} ({} payload) on {}, {} lane(s)",
            pipeline,
            tables.displayTable(),
            format,
            connections.safeUrl(),
            lanes);
        if (settings.listen() && listener == null) {
          listener =
              new NotificationListener(
                  connections,
                  sql.listen,
                  tables.notifyChannel(),
                  tables.outboxTables().wakeLockKey(),
                  wakeUps,
                  pipeline,
                  ticker);
          listener.start();
          WakeGate g =
              new WakeGate(
                  connections,
                  tables.outboxTables().wakeLockKey(),
                  lanes,
                  wakeUps,
                  leader::held,
                  WakeGate.lockTimeout(settings),
                  pipeline,
                  tables.displayTable());
          g.start();
          gate = g;
        }
        // Runs only while this instance holds the leader lock; its own session, autocommit.
        lifecycle.startRetention(
            tables.outboxTables(),
            database,
            () -> connections.dedicated("retention"),
            leader::held);
      }
    } catch (RuntimeException | InterruptedException e) {
      leader.release();
      throw e;
    }
    lifecycle.report(Role.ACTIVE);
  }

  @Override
  public Claim claim(int lane, int maxEvents, Duration maxWait) throws InterruptedException {
    return polls.claim(claimTransactions(lane, maxEvents), lane, maxEvents, maxWait);
  }

  /**
   * {@inheritDoc}
   *
   * <p>One query, no waiting: the lane's next rows without those of {@code inFlight}, in a
   * transaction of its own that does not take the lane's advisory lock ({@code inFlight}'s holds
   * it).
   */
  @Override
  public Claim claimAhead(int lane, int maxEvents, Claim inFlight) {
    ClaimTransactions transactions = claimTransactions(lane, maxEvents);
    if (!(inFlight instanceof PollingClaim current) || current.lane() != lane) {
      throw new IllegalArgumentException(
          "pipeline " + pipeline + ": claimAhead needs lane " + lane + "'s claim in flight");
    }
    return polls.claimAhead(transactions, lane, maxEvents, current);
  }

  /**
   * {@inheritDoc}
   *
   * <p>First that the database's sessions are not pooled by transaction ({@link
   * SessionPoolingCheck}); then the same checks as activation ({@link OutboxTableCheck}), on a
   * session of its own, for tables that exist: a table not created yet (the relay started before
   * {@code migrate}) is left to activation, which says so and retries.
   */
  @Override
  public java.util.List<String> schemaProblems() {
    return OutboxTableCheck.startUpProblems(
        () -> connections.dedicated("start-up check"),
        settings.connectionTimeout(),
        tables.outboxTables(),
        database,
        pipeline);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Declines when no other instance's leader session is connected (nobody to hand over to); when
   * that cannot be read, yields anyway.
   */
  @Override
  public boolean yieldLeadership(Duration pause, String why) {
    if (!leader.held()
        || !new OutboxStatus(tables.tables())
            .handOver(() -> connections.dedicated("yield"), pipeline, pause, why)) {
      return false;
    }
    leader.yieldFor(pause);
    return true;
  }

  /** Checks a claim's arguments; the claim transactions of the current activation. */
  private ClaimTransactions claimTransactions(int lane, int maxEvents) {
    lifecycle.claims().checkArguments(lane, maxEvents);
    ClaimTransactions transactions = claims;
    if (transactions == null) {
      throw new IllegalStateException("pipeline " + pipeline + ": claim() before activate()");
    }
    return transactions;
  }

  @Override
  public void close(Duration timeout) {
    SourceLifecycle.Closing<NotificationListener> closing =
        lifecycle.close(
            timeout,
            () -> {
              NotificationListener stopping = listener;
              listener = null;
              return stopping;
            });
    if (closing == null) {
      return;
    }
    closing.stopRetention();
    wakeUps.wakeAll();
    closing.awaitClaimsEnded("they roll back");
    NotificationListener stopping = closing.taken();
    if (stopping != null) {
      stopping.close(closing.deadline().left());
    }
    WakeGate g = gate;
    if (g != null) {
      g.close(closing.deadline().left());
    }
    leader.close();
    backlog.close();
    pool.close(); // aborts claims still open: their transactions roll back, nothing is lost
    closing.standbyIfActive();
  }

  /**
   * Whether wake-ups work: the notification listener is listening and holds the lock that makes
   * inserts notify, and the wake gate is ready (diagnostics and tests).
   */
  boolean listening() {
    NotificationListener l;
    synchronized (lifecycle.lock()) {
      l = listener;
    }
    WakeGate g = gate;
    return l != null && l.listening() && l.present() && g != null && g.ready();
  }

  /** Whether inserts skip their notification right now (diagnostics and tests). */
  boolean wakeGateHolding() {
    WakeGate g = gate;
    return g != null && g.holding();
  }

  /** How many claim transactions ran so far (diagnostics and tests). */
  long claimQueries() {
    return polls.claimQueries();
  }

  /** How many lanes wait for rows right now (diagnostics and tests). */
  int waitingLanes() {
    return wakeUps.waiting();
  }
}
