package io.outbox.source.polling;

import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.SourceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * "One active instance per pipeline": a PostgreSQL session advisory lock held on a dedicated
 * session for as long as this instance is active, watched by a daemon thread. When the session is
 * lost the lock is gone (another instance may take it), so the instance must stop claiming.
 */
final class LeaderLock {

  private static final Logger log = LoggerFactory.getLogger(LeaderLock.class);

  private final Connections connections;
  private final long key;
  private final PollingSettings settings;
  private final WakeUps wakeUps;
  private final Consumer<Role> roles;
  private final String pipeline;
  private final String table;
  private final ScheduledExecutorService watchdog;
  private Connection session; // guarded by this
  private boolean watching; // guarded by this
  private volatile boolean held;

  LeaderLock(
      Connections connections,
      long key,
      PollingSettings settings,
      WakeUps wakeUps,
      Consumer<Role> roles,
      String pipeline,
      String table) {
    this.connections = connections;
    this.key = key;
    this.settings = settings;
    this.wakeUps = wakeUps;
    this.roles = roles;
    this.pipeline = pipeline;
    this.table = table;
    this.watchdog =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "outbox-relay-" + pipeline + "-polling-leader-watchdog");
              t.setDaemon(true);
              return t;
            });
  }

  /** Whether this instance holds the lock, as far as the last check knows. */
  boolean held() {
    return held;
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
      if (tryOnce()) {
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
      return true;
    }
    try {
      if (session == null) {
        session = connections.dedicated("leader");
      }
      try (PreparedStatement ps = session.prepareStatement(OutboxSql.TRY_LEADER_LOCK)) {
        ps.setLong(1, key);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          held = rs.getBoolean(1);
          return held;
        }
      }
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

  /** The watchdog: a lost session means a lost lock. */
  private void check() {
    synchronized (this) {
      if (!held) {
        return;
      }
      try {
        int seconds = (int) Math.max(1, (settings.connectionTimeout().toMillis() + 999) / 1000);
        if (session.isValid(seconds)) {
          return;
        }
        log.warn("pipeline {}: the session holding the leader lock is gone", pipeline);
      } catch (SQLException | RuntimeException e) {
        log.warn("pipeline {}: leader lock check failed: {}", pipeline, e.getMessage());
      }
      held = false;
      closeSession();
    }
    roles.accept(Role.STANDBY);
    wakeUps.wakeAll(); // lanes waiting for rows notice at once
  }

  /** Gives the lock up (by ending its session). */
  synchronized void release() {
    held = false;
    closeSession();
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
