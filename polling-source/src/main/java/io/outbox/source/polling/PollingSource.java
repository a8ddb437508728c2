package io.outbox.source.polling;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.LedgerWatermark;
import io.outbox.relay.spi.OutstandingClaims;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.support.JdbcLedgerWatermark;
import io.outbox.relay.spi.support.RoleReporter;
import io.outbox.schema.CloseDeadline;
import io.outbox.schema.OutboxStatus;
import io.outbox.schema.RetentionJob;
import io.outbox.schema.RetentionPolicy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
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
  private static final long NOT_IDLE = -1; // wake-up generations start at 0

  private final String pipeline;
  private final int lanes;
  private final DatabaseSettings database;
  private final PollingSettings settings;
  private final TableNames tables;
  private final Connections connections;
  private final WakeUps wakeUps = new WakeUps();
  private final LeaderLock leader;
  private final BacklogReader backlog;
  private final RoleReporter roles;
  private final OutstandingClaims outstanding;
  // Per lane, touched only by the lane's claim() (one at a time, ordered by `outstanding`): the
  // wake-up generation and time of the lane's last query that found nothing.
  private final long[] idleGeneration;
  private final long[] idleSince;
  private final Object lifecycle = new Object();
  private volatile ClaimTransactions claims;
  private volatile HikariDataSource pool;
  private NotificationListener listener; // guarded by lifecycle
  private volatile WakeGate gate; // set once, guarded by lifecycle
  private RetentionJob retention; // guarded by lifecycle
  private volatile boolean closed;
  private final LongAdder claimQueries = new LongAdder();
  private final LedgerWatermark ledger;

  PollingSource(PluginContext context, DatabaseSettings database, PollingSettings settings) {
    this.pipeline = database.pipeline() != null ? database.pipeline() : context.pipeline();
    this.lanes = context.lanes();
    this.database = database;
    this.settings = settings;
    this.tables = TableNames.of(database.table(), database.deadLetterTable());
    this.connections = new Connections(database, settings, pipeline);
    this.roles = new RoleReporter(context.roles(), lifecycle);
    this.outstanding = new OutstandingClaims(lanes, pipeline);
    this.idleGeneration = new long[lanes];
    this.idleSince = new long[lanes];
    Arrays.fill(idleGeneration, NOT_IDLE);
    this.leader =
        new LeaderLock(
            connections, tables, settings, wakeUps, this::report, pipeline, tables.displayTable());
    this.backlog = new BacklogReader(connections, tables, pipeline);
    this.ledger =
        new JdbcLedgerWatermark(
            pipeline,
            new PollingLedger(() -> pool, leader::lease, tables, pipeline, database.onPublish()));
  }

  @Override
  public Optional<LedgerWatermark> ledgerWatermark() {
    return Optional.of(ledger);
  }

  @Override
  public Optional<Backlog> backlog() {
    return backlog.read();
  }

  @Override
  public void activate() throws InterruptedException {
    leader.acquire(() -> closed);
    try {
      synchronized (lifecycle) {
        if (closed) {
          throw new InterruptedException("pipeline " + pipeline + ": source closed");
        }
        if (pool == null) {
          pool = connections.pool(lanes);
        }
        PayloadFormat format;
        try (Connection c = pool.getConnection()) {
          format = OutboxSchema.inspect(c, tables, !database.retention().deadLetters().isZero());
          c.rollback();
        } catch (SQLException e) {
          throw new SourceException(
              "pipeline "
                  + pipeline
                  + ": cannot read the columns of "
                  + tables.displayTable()
                  + " on "
                  + connections.safeUrl()
                  + ": "
                  + e.getMessage(),
              e);
        }
        OutboxSql sql = new OutboxSql(tables, format, lanes);
        claims =
            new ClaimTransactions(
                pool,
                sql,
                format,
                tables,
                lanes,
                database.onPublish(),
                pipeline,
                connections.safeUrl(),
                this::ended,
                leader.lease());
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
                  connections, sql.listen, tables.notifyChannel(), wakeUps, pipeline);
          listener.start();
          WakeGate g =
              new WakeGate(
                  connections,
                  tables.outboxTables().wakeLockKey(),
                  lanes,
                  wakeUps,
                  leader::held,
                  gateLockTimeout(),
                  pipeline,
                  tables.displayTable());
          g.start();
          gate = g;
        }
        if (retention == null && database.retention().enabled()) {
          // Runs only while this instance holds the leader lock; its own session, autocommit.
          retention =
              RetentionJob.start(
                  tables.outboxTables(),
                  pipeline,
                  policy(database.retention()),
                  () -> connections.dedicated("retention"),
                  leader::held);
        }
      }
    } catch (RuntimeException | InterruptedException e) {
      leader.release();
      throw e;
    }
    report(Role.ACTIVE);
  }

  @Override
  public Claim claim(int lane, int maxEvents, Duration maxWait) throws InterruptedException {
    ClaimTransactions transactions = claimTransactions(lane, maxEvents);
    outstanding.begin(lane);
    boolean handedOut = false;
    try {
      long deadline = System.nanoTime() + Math.max(0, maxWait.toNanos());
      long poll = settings.pollInterval().toNanos();
      while (!closed) {
        checkLeadership();
        long generation = wakeUps.generation();
        long now = System.nanoTime();
        // An idle lane queries again only when woken or when the poll interval passed, however
        // short the caller's maxWait: idle load is one query per lane per poll interval.
        if (generation != idleGeneration[lane] || now - idleSince[lane] >= poll) {
          claimQueries.increment();
          PollingClaim claim = transactions.open(lane, maxEvents, leader::held, null);
          WakeGate g = gate;
          if (claim == null) {
            if (g != null) {
              g.empty(lane);
            }
            checkLeadership(); // rows found just as the leader lock was lost were given back
          } else {
            if (g != null) {
              g.found(lane);
            }
            wakeOthersWhileQuiet();
            idleGeneration[lane] = NOT_IDLE;
            handedOut = true;
            return claim;
          }
          idleGeneration[lane] = generation;
          idleSince[lane] = now;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        long untilPoll = idleSince[lane] + poll - System.nanoTime();
        wakeUps.awaitChange(idleGeneration[lane], Math.max(0, Math.min(untilPoll, left)));
      }
      return Claim.empty();
    } finally {
      if (!handedOut) {
        ended(lane);
      }
    }
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
    if (closed) {
      return Claim.empty();
    }
    checkLeadership();
    outstanding.beginAhead(lane);
    boolean handedOut = false;
    try {
      claimQueries.increment();
      PollingClaim claim = transactions.open(lane, maxEvents, leader::held, current.ids());
      if (claim == null) {
        return Claim.empty();
      }
      wakeOthersWhileQuiet();
      handedOut = true;
      return claim;
    } finally {
      if (!handedOut) {
        ended(lane);
      }
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>The same checks as activation ({@link OutboxSchema}), on a session of its own, for tables
   * that exist: a table not created yet (the relay started before {@code migrate}) is left to
   * activation, which says so and retries.
   */
  @Override
  public java.util.List<String> schemaProblems() {
    try (Connection c = connections.dedicated("start-up check")) {
      c.setNetworkTimeout(Runnable::run, (int) settings.connectionTimeout().toMillis());
      if (!OutboxSchema.tablesExist(c, tables)) {
        return java.util.List.of();
      }
      OutboxSchema.inspect(c, tables, !database.retention().deadLetters().isZero());
      return java.util.List.of();
    } catch (SourceException e) {
      return java.util.List.of(e.getMessage());
    } catch (SQLException e) {
      log.debug(
          "pipeline {}: cannot check the tables at start-up, activation will: {}",
          pipeline,
          e.getMessage());
      return java.util.List.of();
    }
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

  /**
   * While inserts may skip their notification (the wake gate is quiet), a claim that found rows
   * stands in for them: the waiting lanes look once more, so a row of theirs committed while
   * another lane was busy waits at most for one of that lane's claims.
   */
  private void wakeOthersWhileQuiet() {
    WakeGate g = gate;
    if (g != null && g.quiet()) {
      wakeUps.wakeAll();
    }
  }

  /**
   * How long the wake gate waits for its locks: the poll interval, after which a row is found by
   * polling anyway, but less than statement-timeout, which would end the wait as a failure.
   */
  private Duration gateLockTimeout() {
    Duration poll = settings.pollInterval();
    Duration statement = settings.statementTimeout();
    if (statement.isZero() || statement.compareTo(poll.multipliedBy(2)) > 0) {
      return poll;
    }
    return statement.dividedBy(2);
  }

  /** Checks a claim's arguments; the claim transactions of the current activation. */
  private ClaimTransactions claimTransactions(int lane, int maxEvents) {
    outstanding.checkArguments(lane, maxEvents);
    ClaimTransactions transactions = claims;
    if (transactions == null) {
      throw new IllegalStateException("pipeline " + pipeline + ": claim() before activate()");
    }
    return transactions;
  }

  private static RetentionPolicy policy(DatabaseSettings.Retention r) {
    return new RetentionPolicy(r.published(), r.deadLetters(), r.batchSize(), r.interval());
  }

  private void checkLeadership() {
    if (!leader.held()) {
      throw new LeadershipLostException(
          "pipeline "
              + pipeline
              + ": this instance lost its leader lock on "
              + tables.displayTable()
              + "; another instance may be active");
    }
  }

  @Override
  public void close(Duration timeout) {
    CloseDeadline deadline = new CloseDeadline(timeout);
    NotificationListener stopping;
    RetentionJob stoppingRetention;
    synchronized (lifecycle) {
      if (closed) {
        return;
      }
      closed = true;
      stopping = listener;
      listener = null;
      stoppingRetention = retention;
      retention = null;
    }
    deadline.stop(stoppingRetention);
    wakeUps.wakeAll();
    awaitClaimsEnded(deadline.nanos());
    if (stopping != null) {
      stopping.close(deadline.left());
    }
    WakeGate g = gate;
    if (g != null) {
      g.close(deadline.left());
    }
    leader.close();
    backlog.close();
    HikariDataSource p = pool;
    if (p != null) {
      p.close(); // aborts claims still open: their transactions roll back, nothing is lost
    }
    roles.standbyIfActive();
  }

  /** Lets claims in flight settle, until the deadline. */
  private void awaitClaimsEnded(long deadline) {
    if (!outstanding.awaitNone(deadline)) {
      log.warn("pipeline {}: closing with claims still open; they roll back", pipeline);
    }
  }

  private void report(Role role) {
    roles.report(role);
  }

  /**
   * Whether wake-ups work: the notification listener is listening and the wake gate is ready
   * (diagnostics and tests).
   */
  boolean listening() {
    NotificationListener l;
    synchronized (lifecycle) {
      l = listener;
    }
    WakeGate g = gate;
    return l != null && l.listening() && g != null && g.ready();
  }

  /** Whether inserts skip their notification right now (diagnostics and tests). */
  boolean wakeGateHolding() {
    WakeGate g = gate;
    return g != null && g.holding();
  }

  /** How many claim transactions ran so far (diagnostics and tests). */
  long claimQueries() {
    return claimQueries.sum();
  }

  /** How many lanes wait for rows right now (diagnostics and tests). */
  int waitingLanes() {
    return wakeUps.waiting();
  }

  /** Called exactly once when a claim of {@code lane} ended. */
  private void ended(int lane) {
    outstanding.end(lane);
  }
}
