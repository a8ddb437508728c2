package io.outbox.source.postgres;

import io.outbox.relay.spi.Ticker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a standby of a {@link LeaderLease} does when another instance holds the leader lock: if the
 * holder's lease expired (it is frozen or cut off, its session still open), ends its session so
 * that a later attempt takes the lock. A holder whose lease row is not its own (it took the lock an
 * instant ago, or it is an instance from before leases) is given three leases to write one.
 *
 * <p>Not thread-safe: called under the lease's lock.
 */
final class ExpiredHolderEviction {

  // The lease's lines, under the lease's name: operators filter on it.
  private static final Logger log = LoggerFactory.getLogger(LeaderLease.class);

  private final String pipeline;
  private final Duration lease;
  private final Ticker ticker;
  private final long leaderKey;
  private final String leaderTable;
  private long holderMismatchSince = Long.MIN_VALUE;
  private int mismatchPid; // the holder timed by holderMismatchSince
  private int warnedPid;

  /** {@code leaderTable}: the quoted lease table. */
  ExpiredHolderEviction(
      String pipeline, Duration lease, Ticker ticker, long leaderKey, String leaderTable) {
    this.pipeline = pipeline;
    this.lease = lease;
    this.ticker = ticker;
    this.leaderKey = leaderKey;
    this.leaderTable = leaderTable;
  }

  /** Ends the session of the lock's holder if its lease expired (or it wrote none in time). */
  void endIfExpired(Connection session) throws SQLException {
    String sql =
        "SELECT l.pid, t.holder, t.holder_pid, t.expires_at < now(),"
            + " EXTRACT(EPOCH FROM now() - t.expires_at),"
            // Whether this role may end the holder's session: the same role, pg_signal_backend,
            // or a superuser.
            + " NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.pid"
            + " AND a.usename IS DISTINCT FROM current_user)"
            + " OR pg_has_role(current_user, 'pg_signal_backend', 'MEMBER')"
            + " OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"
            + " FROM pg_locks l LEFT JOIN "
            + leaderTable
            + " t ON t.pipeline = ?"
            + " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
            + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            + " AND l.classid = ?::bigint::oid AND l.objid = ?::bigint::oid";
    int pid;
    String expiredHolder;
    double overdueSeconds;
    try (PreparedStatement ps = session.prepareStatement(sql)) {
      ps.setString(1, pipeline);
      ps.setLong(2, leaderKey >>> 32);
      ps.setLong(3, leaderKey & 0xffff_ffffL);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return; // released meanwhile: the next attempt takes it
        }
        pid = rs.getInt(1);
        warnOnceIfCannotEnd(pid, rs.getBoolean(6));
        int leasePid = rs.getInt(3);
        boolean ownLease = !rs.wasNull() && leasePid == pid;
        if (ownLease) {
          forget();
          if (!rs.getBoolean(4)) {
            return; // renewed in time
          }
          expiredHolder = rs.getString(2);
          overdueSeconds = rs.getDouble(5);
        } else {
          long now = ticker.nanoTime();
          if (mismatchPid != pid) { // another holder than the one timed so far: time it anew
            mismatchPid = pid;
            holderMismatchSince = now;
          }
          if (now - holderMismatchSince < 3 * lease.toNanos()) {
            return;
          }
          expiredHolder = "an instance that wrote no lease (session " + pid + ")";
          overdueSeconds = (now - holderMismatchSince) / 1e9;
        }
      }
    }
    log.warn(
        "pipeline {}: the active instance {} has not renewed its lease for {} s past its expiry"
            + " (frozen or cut off); ending its session {} to take over",
        pipeline,
        expiredHolder,
        String.format(Locale.ROOT, "%.1f", overdueSeconds),
        pid);
    try (PreparedStatement ps = session.prepareStatement("SELECT pg_terminate_backend(?)")) {
      ps.setInt(1, pid);
      ps.execute();
    } catch (SQLException e) {
      // Not a database outage: this standby stays connected and tries again at its next check.
      log.error(
          "pipeline {}: cannot end the session {} of the expired active instance ({}); the"
              + " relay's role needs to be the other instance's role, or a member of"
              + " pg_signal_backend",
          pipeline,
          pid,
          e.getMessage());
      return;
    }
    forget();
  }

  /** Forgets the holder timed so far: this instance took the lock, or the holder is gone. */
  void forget() {
    mismatchPid = 0;
    holderMismatchSince = Long.MIN_VALUE;
  }

  /**
   * Says at once, not only when a take-over is due, that this instance could not replace the holder
   * {@code pid} should it freeze: it runs as another role and this one may not end it.
   */
  private void warnOnceIfCannotEnd(int pid, boolean canEnd) {
    if (canEnd || warnedPid == pid) {
      return;
    }
    warnedPid = pid;
    log.warn(
        "pipeline {}: the active instance (session {}) runs as another database role and this"
            + " role is not a member of pg_signal_backend: should that instance freeze, this"
            + " standby cannot take over (docs/security.md)",
        pipeline,
        pid);
  }
}
