package io.outbox.source.polling;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the insert trigger when the relay needs no wake-up, so that the application's commits do
 * not queue on PostgreSQL's notification lock. While some lane's last claim found rows (it will
 * claim again without waiting) the gate's own session holds the advisory lock {@code (key, 1)}
 * exclusively and the trigger skips its {@code NOTIFY}; a skipping transaction holds {@code (key,
 * 2)} shared until it ends. When no lane is busy any more the gate releases {@code (key, 1)}, takes
 * {@code (key, 2)} exclusively, which waits for every skipper, and wakes every lane once, so a row
 * committed meanwhile is claimed at once. docs/design.md, "Wake-ups", has the argument.
 */
final class WakeGate {

  private static final Logger log = LoggerFactory.getLogger(WakeGate.class);

  /** How often the gate re-reads the leadership and, every tenth time, checks its session. */
  private static final long CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /** PostgreSQL's SQLSTATE for lock_timeout. */
  private static final String LOCK_NOT_AVAILABLE = "55P03";

  private final Connections connections;
  private final int key;
  private final WakeUps wakeUps;
  private final BooleanSupplier leader;
  private final Duration lockTimeout;
  private final String pipeline;
  private final String table;
  private final SessionKeeper keeper;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final boolean[] busyLanes; // guarded by lock
  private int busy; // guarded by lock: how many of busyLanes are true

  /**
   * Whether a transaction may have skipped its notification and not yet been waited for: from the
   * moment the gate asks for {@code (key, 1)} until its barrier after releasing it. Meanwhile a
   * lane that finds rows wakes the others (a busy lane's claims stand in for the notifications).
   */
  private volatile boolean quiet;

  private volatile boolean held;
  private volatile boolean ready;

  /**
   * How long the gate waits for its locks: the poll interval, after which a row is found by polling
   * anyway, but less than statement-timeout, which would end the wait as a failure.
   */
  static Duration lockTimeout(PollingSettings settings) {
    Duration poll = settings.pollInterval();
    Duration statement = settings.statementTimeout();
    if (statement.isZero() || statement.compareTo(poll.multipliedBy(2)) > 0) {
      return poll;
    }
    return statement.dividedBy(2);
  }

  WakeGate(
      Connections connections,
      int key,
      int lanes,
      WakeUps wakeUps,
      BooleanSupplier leader,
      Duration lockTimeout,
      String pipeline,
      String table) {
    this.connections = connections;
    this.key = key;
    this.busyLanes = new boolean[lanes];
    this.wakeUps = wakeUps;
    this.leader = leader;
    this.lockTimeout = lockTimeout;
    this.pipeline = pipeline;
    this.table = table;
    this.keeper =
        new SessionKeeper(
            connections,
            "wake",
            pipeline,
            "outbox-relay-" + pipeline + "-polling-wake-gate",
            new Gating());
  }

  void start() {
    keeper.start();
  }

  /** A claim query of {@code lane} found rows: the lane claims again without waiting. */
  void found(int lane) {
    mark(lane, true);
  }

  /** A claim query of {@code lane} found nothing: the lane now waits for a wake-up. */
  void empty(int lane) {
    mark(lane, false);
  }

  /** Whether lanes that find rows must wake the waiting lanes (see {@link #quiet}). */
  boolean quiet() {
    return quiet;
  }

  /** Whether the gate's session is open and past its first barrier (tests and diagnostics). */
  boolean ready() {
    return ready;
  }

  /** Whether the gate holds {@code (key, 1)}, i.e. inserts skip their notification (tests). */
  boolean holding() {
    return held;
  }

  void close(Duration timeout) {
    keeper.close(timeout);
  }

  private void mark(int lane, boolean isBusy) {
    lock.lock();
    try {
      if (busyLanes[lane] == isBusy) {
        return;
      }
      busyLanes[lane] = isBusy;
      busy += isBusy ? 1 : -1;
      if (busy == 0 || busy == 1) {
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Waits until the wanted state differs from {@code have}, or the check interval passed. */
  private boolean awaitWanted(boolean have) throws InterruptedException {
    long left = CHECK_NANOS;
    lock.lock();
    try {
      while (true) {
        boolean want = busy > 0 && leader.getAsBoolean();
        if (want != have || left <= 0) {
          return want;
        }
        left = changed.awaitNanos(left);
      }
    } finally {
      lock.unlock();
    }
  }

  /** The gate's session: takes and releases {@code (key, 1)} as the lanes need. */
  private final class Gating implements SessionKeeper.Session {

    @Override
    public void work(Connection c, Runnable established) throws SQLException, InterruptedException {
      try (Statement s = c.createStatement()) {
        s.execute("SET lock_timeout = " + Math.max(1, lockTimeout.toMillis()));
      }
      // Skippers of an earlier session (gone, and its lock with it) are waited for here.
      endQuiet(c);
      ready = true;
      established.run();
      int checks = 0;
      while (!keeper.stopping()) {
        boolean want = awaitWanted(held);
        if (want && !held) {
          acquire(c);
        } else if (!want && held) {
          execute(c, "SELECT pg_advisory_unlock(?, 1)");
          held = false;
          endQuiet(c);
        } else if (++checks % 10 == 0) {
          execute(c, "SELECT 1"); // a session the network lost would hold nothing, silently
        }
      }
    }

    @Override
    public void lost() {
      held = false; // the session is gone or going, and its lock with it
      ready = false;
    }

    @Override
    public void failed(SQLException e, long retryMs) {
      log.warn(
          "pipeline {}: the wake gate's session on {} failed, inserts notify meanwhile;"
              + " retrying in {} ms: {}",
          pipeline,
          connections.safeUrl(),
          retryMs,
          e.getMessage());
      wakeUps.wakeAll();
    }
  }

  /**
   * Takes {@code (key, 1)} exclusively. While the request waits, new inserts already skip (a try
   * conflicts with a waiting request), so {@link #quiet} is raised first. A session of an earlier
   * active instance that still holds it (frozen when another took over) is ended.
   */
  private void acquire(Connection c) throws SQLException, InterruptedException {
    quiet = true;
    for (int attempt = 0; attempt < 2; attempt++) {
      try {
        execute(c, "SELECT pg_advisory_lock(?, 1)");
        held = true;
        return;
      } catch (SQLException e) {
        if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
          throw e;
        }
        if (attempt == 0 && endStaleHolders(c) == 0) {
          break; // application transactions that hold it shared for long: try again later
        }
      }
    }
    endQuiet(c);
    TimeUnit.NANOSECONDS.sleep(CHECK_NANOS);
  }

  /**
   * Waits for every transaction that skipped its notification ({@code (key, 2)} exclusively, then
   * released), then wakes every lane once. A skipper still open after lock-timeout (an application
   * transaction that inserted long before it commits) is left to the poll interval.
   */
  private void endQuiet(Connection c) throws SQLException {
    try {
      execute(c, "SELECT pg_advisory_lock(?, 2)");
      execute(c, "SELECT pg_advisory_unlock(?, 2)");
    } catch (SQLException e) {
      if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
        throw e;
      }
      log.debug(
          "pipeline {}: a transaction that skipped its notification is still open after {} ms;"
              + " its rows are found by the poll interval",
          pipeline,
          lockTimeout.toMillis());
    }
    quiet = false;
    wakeUps.wakeAll();
  }

  /**
   * Ends other sessions of this pipeline's gate (an earlier, frozen active instance) holding {@code
   * (key, 1)} exclusively: only a gate takes it that way.
   */
  private int endStaleHolders(Connection c) throws SQLException {
    String sql =
        "SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l WHERE "
            + WakeLocks.heldExclusively(1)
            + " AND l.pid <> pg_backend_pid()"
            // Only this pipeline's own gate sessions (the same session name): another pipeline
            // on the table (a Kafka Connect task, say) holds the gate legitimately while busy.
            + " AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.pid"
            + " AND a.application_name = current_setting('application_name'))";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, WakeLocks.classid(key));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        int ended = rs.getInt(1);
        if (ended > 0) {
          log.warn(
              "pipeline {}: ended {} session(s) of an earlier active instance that still held"
                  + " the wake gate of {}",
              pipeline,
              ended,
              table);
        }
        return ended;
      }
    }
  }

  private void execute(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      if (sql.contains("?")) {
        ps.setInt(1, key);
      }
      ps.execute();
    }
  }
}
