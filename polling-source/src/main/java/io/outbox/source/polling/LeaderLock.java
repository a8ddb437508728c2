package io.outbox.source.polling;

import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.SourceException;
import io.outbox.schema.LeaderLease;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * "One active instance per pipeline": a {@link LeaderLease} (a session advisory lock plus a lease
 * row with an epoch) held on a dedicated session for as long as this instance is active, renewed by
 * a daemon thread every {@code leadership-check-interval}. When the session is lost, the renewal
 * fails, or the lease ran out (this process was frozen), the instance stops claiming; every claim
 * checks the lease's epoch in SQL ({@link ClaimTransactions}).
 */
final class LeaderLock {

  private static final Logger log = LoggerFactory.getLogger(LeaderLock.class);

  private final Connections connections;
  private final PollingSettings settings;
  private final WakeUps wakeUps;
  private final Consumer<Role> roles;
  private final String pipeline;
  private final String table;
  private final String leaderRole;
  private final ScheduledExecutorService watchdog;
  private final LeaderLease lease;
  private Connection session; // guarded by this
  private boolean watching; // guarded by this
  private volatile boolean held;
  private volatile long standbyUntilNanos = System.nanoTime();

  LeaderLock(
      Connections connections,
      TableNames tables,
      PollingSettings settings,
      WakeUps wakeUps,
      Consumer<Role> roles,
      String pipeline,
      String table) {
    this.connections = connections;
    this.lease =
        new LeaderLease(
            tables.outboxTables(),
            pipeline,
            LeaderLease.thisInstance(),
            settings.leaseTimeout(),
            settings.fenceWait(),
            System::nanoTime);
    this.settings = settings;
    this.wakeUps = wakeUps;
    this.roles = roles;
    this.pipeline = pipeline;
    this.table = table;
    // The session's application_name is then OutboxTables.leaderSessionName: status counts the
    // standbys by it.
    this.leaderRole = "leader " + tables.outboxTables().displayTable();
    this.watchdog =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "outbox-relay-" + pipeline + "-polling-leader-watchdog");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Whether this instance holds the lease, as far as the last renewal knows and unless it ran out
   * since (a frozen process wakes up to {@code false}).
   */
  boolean held() {
    return held && lease.held();
  }

  /** The lease, for the claims' fence and epoch check. */
  LeaderLease lease() {
    return lease;
  }

  /**
   * Gives leadership up (the pipeline's lanes made no progress) and tries again only after {@code
   * pause}, so that a standby can take over.
   */
  void yieldFor(java.time.Duration pause) {
    standbyUntilNanos = System.nanoTime() + pause.toNanos();
    synchronized (this) {
      lost();
    }
    roles.accept(Role.STANDBY);
    wakeUps.wakeAll();
  }

  /**
   * Blocks until the lock is taken, reporting standby while another instance holds it.
   *
   * @param closed when it turns true, gives up with an {@link InterruptedException}
   * @throws SourceException when the database cannot be reached
   */
  void acquire(BooleanSupplier closed) throws InterruptedException {
    boolean waiting = false;
    while (true) {
      if (closed.getAsBoolean() || Thread.currentThread().isInterrupted()) {
        throw new InterruptedException("pipeline " + pipeline + ": source closed");
      }
      if (held()) {
        return; // still active (the pipeline's lanes ended for another reason)
      }
      if (System.nanoTime() - standbyUntilNanos >= 0 && tryOnce()) {
        watch();
        log.info("pipeline {}: this instance is now the active one for {}", pipeline, table);
        return;
      }
      if (!waiting) {
        waiting = true;
        log.info(
            "pipeline {}: another instance is active for {}; standing by, checking every {} ms",
            pipeline,
            table,
            settings.standbyCheckInterval().toMillis());
        roles.accept(Role.STANDBY);
      }
      wakeUps.sleep(settings.standbyCheckInterval().toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  private synchronized boolean tryOnce() {
    if (held) {
      // The lease ran out before the watchdog noticed (this process was paused): the session may
      // be ended by a standby any moment; start over on a new one, with a new epoch.
      lost();
    }
    try {
      if (session == null) {
        session = connections.dedicated(leaderRole);
        // A renewal or take-over that hangs on a dead network ends within a bound.
        session.setNetworkTimeout(Runnable::run, networkTimeoutMillis());
      }
      held = lease.tryAcquire(session);
      return held;
    } catch (SQLException e) {
      closeSession();
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": cannot take the leader lock on "
              + connections.safeUrl()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  private synchronized void watch() {
    if (!watching) {
      watching = true;
      long every = settings.leadershipCheckInterval().toMillis();
      watchdog.scheduleWithFixedDelay(this::check, every, every, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * The watchdog: renews the lease. A lost session, a failed renewal or a raised epoch means a lost
   * lease.
   */
  private void check() {
    try {
      renewOrStandDown();
    } catch (Error e) {
      // Thrown out of a scheduled task, it would end the renewals for good, silently.
      log.error("pipeline {}: renewing the lease failed; standing down", pipeline, e);
      synchronized (this) {
        lost();
      }
      roles.accept(Role.STANDBY);
      wakeUps.wakeAll();
    }
  }

  private void renewOrStandDown() {
    synchronized (this) {
      if (!held) {
        return;
      }
      try {
        if (lease.renew(session) && lease.held()) {
          return;
        }
        log.warn(
            "pipeline {}: lost the lease (another instance took over, or this one was paused past"
                + " its lease-timeout of {} ms)",
            pipeline,
            settings.leaseTimeout().toMillis());
      } catch (SQLException | RuntimeException e) {
        log.warn("pipeline {}: renewing the lease failed: {}", pipeline, e.getMessage());
      }
      lost();
    }
    roles.accept(Role.STANDBY);
    wakeUps.wakeAll(); // lanes waiting for rows notice at once
  }

  /** Longest a renewal may wait for the database: half the lease, at least a second. */
  private int networkTimeoutMillis() {
    return (int) Math.max(1000, settings.leaseTimeout().toMillis() / 2);
  }

  private void lost() {
    held = false;
    lease.lost();
    closeSession();
  }

  /** Gives the lock up (by ending its session). */
  synchronized void release() {
    lost();
  }

  /** Releases the lock and stops the watchdog. */
  void close() {
    watchdog.shutdownNow();
    release();
  }

  private void closeSession() {
    if (session != null) {
      try {
        session.close();
      } catch (SQLException e) {
        log.debug("pipeline {}: closing the leader session: {}", pipeline, e.getMessage());
      }
      session = null;
    }
  }
}
