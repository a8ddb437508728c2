package io.outbox.source.cdc;

import io.outbox.relay.spi.SourceException;
import io.outbox.schema.OutboxStatus;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * "One active instance per pipeline" for the CDC source: a PostgreSQL session advisory lock, held
 * on a dedicated session while this instance streams. The slot admits one consumer anyway; the lock
 * makes a second relay stand by quietly instead of failing on a busy slot, and take over within
 * {@code standby-check-interval} once the first one's session is gone.
 */
final class CdcLeaderLock {

  private final CdcConnections connections;
  private final long key;
  private final Duration checkInterval;
  private final String pipeline;
  private Connection session; // guarded by this
  private long lastCheck; // guarded by this
  private volatile boolean held;

  /**
   * @param key the pipeline's leader lock ({@code OutboxTables.leaderLockKey}), the same one the
   *     polling source takes: whatever the source, one instance per pipeline publishes, and {@code
   *     status} finds it
   */
  CdcLeaderLock(CdcConnections connections, long key, Duration checkInterval, String pipeline) {
    this.connections = connections;
    this.key = key;
    this.checkInterval = checkInterval;
    this.pipeline = pipeline;
  }

  /** A stable 64-bit hash of {@code value}: the same on every instance and JVM. */
  static long key(String value) {
    try {
      byte[] d =
          MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
      long k = 0;
      for (int i = 0; i < 8; i++) {
        k = (k << 8) | (d[i] & 0xff);
      }
      return k;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }

  /**
   * Blocks until the lock is taken.
   *
   * @param standby called once when another instance holds the lock
   * @param closed when it turns true, gives up with an {@link InterruptedException}
   */
  void acquire(Runnable standby, BooleanSupplier closed) throws InterruptedException {
    boolean waiting = false;
    while (!tryOnce()) {
      if (!waiting) {
        waiting = true;
        standby.run();
      }
      long until = System.nanoTime() + checkInterval.toNanos();
      while (System.nanoTime() < until) {
        if (closed.getAsBoolean() || Thread.currentThread().isInterrupted()) {
          throw new InterruptedException("pipeline " + pipeline + ": source closed");
        }
        TimeUnit.MILLISECONDS.sleep(Math.min(50, Math.max(1, checkInterval.toMillis())));
      }
    }
  }

  private synchronized boolean tryOnce() {
    try {
      if (session == null) {
        // Named as status expects the leader sessions to be named (standbys are counted by it).
        session = connections.dedicatedNamed(OutboxStatus.leaderSessionName(pipeline));
      }
      try (PreparedStatement ps = session.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
        ps.setLong(1, key);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          held = rs.getBoolean(1);
          lastCheck = System.nanoTime();
          return held;
        }
      }
    } catch (SQLException e) {
      release();
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": cannot take the leader lock on "
              + connections.where()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Whether the lock is still held; checks the session at most once per check interval (a lost
   * session means a lost lock).
   */
  synchronized boolean stillHeld() {
    if (!held) {
      return false;
    }
    long now = System.nanoTime();
    if (now - lastCheck < checkInterval.toNanos()) {
      return true;
    }
    lastCheck = now;
    try {
      if (session.isValid(5)) {
        return true;
      }
    } catch (SQLException e) {
      // Lost, as below.
    }
    release();
    return false;
  }

  /** Gives the lock up by ending its session. */
  synchronized void release() {
    held = false;
    if (session != null) {
      try {
        session.close();
      } catch (SQLException e) {
        // The session is gone either way, and with it the lock.
      }
      session = null;
    }
  }
}
