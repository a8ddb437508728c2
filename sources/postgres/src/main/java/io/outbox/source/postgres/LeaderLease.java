package io.outbox.source.postgres;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Ticker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pipeline's leadership, as the database sees it: the session advisory lock that makes one
 * instance active, plus a lease row ({@code <table>_relay_leader}) with an epoch and an expiry on
 * the database clock.
 *
 * <ul>
 *   <li>The lock alone frees leadership when the holder's session ends (a crash, a kill -9), but
 *       not when the holder is frozen (SIGSTOP, a GC or VM pause) or cut off behind a network that
 *       drops packets: its session stays open. The lease closes that gap: the holder renews it
 *       every {@code renew-interval}; a standby that finds it expired ends the holder's session
 *       ({@code pg_terminate_backend}, {@link ExpiredHolderEviction}) and takes the lock.
 *   <li>The holder counts its own lease as lost a margin before the database does ({@link #held()}
 *       compares a monotonic clock with the last renewal), so an instance that wakes from a freeze
 *       stops before a standby can have taken over.
 *   <li>Taking over raises the epoch while holding the fence lock ({@link
 *       OutboxTables#fenceLockKey}) exclusively; every claim holds it shared and checks the epoch
 *       in SQL ({@link #claimFenceSql()}, {@link #epochPredicate(String)}). So the new epoch starts
 *       only after every claim of the old one ended (or was ended), and a fenced instance can
 *       neither claim nor settle.
 * </ul>
 *
 * <p>Not thread-safe: one owner thread, or external synchronization; {@link #held()} may be called
 * from any thread.
 */
public final class LeaderLease {

  private static final Logger log = LoggerFactory.getLogger(LeaderLease.class);

  /** SQLSTATE of a lock_timeout. */
  private static final String LOCK_NOT_AVAILABLE = "55P03";

  private static final int TAKEOVER_TRIES = 5;

  private final String pipeline;
  private final String holder;
  private final Duration lease;
  private final Duration fenceWait;
  private final Ticker ticker;
  private final long leaderKey;
  private final int[] fenceKey;
  private final String leaderTable;
  private final String displayLeaderTable;
  private volatile long epoch; // written under this
  private volatile boolean held;
  private volatile long validUntilNanos;
  private final ExpiredHolderEviction eviction; // guarded by this

  /**
   * @param tables the pipeline's tables
   * @param pipeline the pipeline
   * @param holder who this instance is (host, pid), stored in the lease for operators
   * @param lease how long a renewal is valid on the database clock; this instance counts it lost
   *     after 80 % of it
   * @param fenceWait how long taking over waits for the claims of the instance before ending their
   *     sessions
   * @param ticker what the lease's validity is measured on, the relay's ticker
   */
  public LeaderLease(
      OutboxTables tables,
      String pipeline,
      String holder,
      Duration lease,
      Duration fenceWait,
      Ticker ticker) {
    this.pipeline = Objects.requireNonNull(pipeline, "pipeline");
    this.holder = Objects.requireNonNull(holder, "holder");
    this.lease = Objects.requireNonNull(lease, "lease");
    this.fenceWait = Objects.requireNonNull(fenceWait, "fenceWait");
    this.ticker = ticker;
    this.leaderKey = tables.leaderLockKey(pipeline);
    this.fenceKey = tables.fenceLockKey(pipeline);
    this.leaderTable = tables.qualifiedLeaderTable();
    this.displayLeaderTable = tables.schema() + "." + tables.leaderTable();
    this.eviction = new ExpiredHolderEviction(pipeline, lease, ticker, leaderKey, leaderTable);
  }

  /** Who this process is, as written in the lease for operators: {@code host/pid}. */
  public static String thisInstance() {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      host = "unknown-host";
    }
    return host + "/" + ProcessHandle.current().pid();
  }

  /** Whether this instance is the active one: it took the lease and renewed it in time. */
  public boolean held() {
    return held && ticker.nanoTime() - validUntilNanos < 0;
  }

  /** The epoch this instance holds (meaningful while {@link #held()}). */
  public long epoch() {
    return epoch;
  }

  /**
   * One attempt to become the active instance, on {@code session} (a dedicated session in
   * autocommit mode, which then holds the leader lock for as long as this instance is active). When
   * another instance holds the lock but let its lease expire, ends that instance's session so that
   * a later attempt can succeed.
   *
   * @return whether this instance now holds the lease
   */
  public synchronized boolean tryAcquire(Connection session) throws SQLException {
    held = false;
    if (!tryLock(session)) {
      eviction.endIfExpired(session);
      return false;
    }
    eviction.forget();
    boolean done = false;
    long started;
    session.setAutoCommit(false);
    try {
      takeFence(session);
      // Taken right before the statement that sets expires_at from the database's clock: the
      // local validity then ends before the database's, whatever the fence wait took.
      started = ticker.nanoTime();
      epoch = upsert(session);
      session.commit(); // releases the fence lock
      done = true;
    } finally {
      if (!done) {
        rollbackQuietly(session);
        unlockQuietly(session);
      }
      session.setAutoCommit(true);
    }
    validUntilNanos = started + validity();
    held = true;
    log.debug("pipeline {}: took the lease of {} at epoch {}", pipeline, displayLeaderTable, epoch);
    return true;
  }

  /**
   * Renews the lease; on {@code false} (another instance raised the epoch) or an exception the
   * lease is lost and the caller should end the session.
   */
  public synchronized boolean renew(Connection session) throws SQLException {
    if (!held) {
      return false;
    }
    long started = ticker.nanoTime();
    try (PreparedStatement ps =
        session.prepareStatement(
            "UPDATE "
                + leaderTable
                + " SET expires_at = clock_timestamp() + ?::bigint * interval '1 millisecond'"
                // A lease that already expired is not renewed: a standby may be ending this
                // session right now; the caller takes the role again with a new epoch instead.
                + " WHERE pipeline = ? AND epoch = ? AND expires_at > clock_timestamp()")) {
      ps.setLong(1, lease.toMillis());
      ps.setString(2, pipeline);
      ps.setLong(3, epoch);
      if (ps.executeUpdate() != 1) {
        held = false;
        return false;
      }
    } catch (SQLException | RuntimeException e) {
      held = false;
      throw e;
    }
    validUntilNanos = started + validity();
    return true;
  }

  /** Forgets the lease locally; the caller ends the session, which frees the lock. */
  public void lost() {
    held = false;
  }

  /**
   * The statement that opens every claim transaction: the fence lock, shared, as its first column
   * ({@code false} while an instance takes over), then the lane's lock as its second. Bind the
   * fence key with {@link #bindFence(PreparedStatement, int)}, then the lane key.
   */
  public static String claimFenceSql() {
    return "SELECT pg_try_advisory_xact_lock_shared(?, ?), pg_try_advisory_xact_lock(?, ?)";
  }

  /** The fence lock alone, shared: what a claim made ahead takes (the lane's lock is taken). */
  public static String fenceOnlySql() {
    return "SELECT pg_try_advisory_xact_lock_shared(?, ?)";
  }

  /** Binds the fence key at {@code index} and {@code index + 1}; returns the next index. */
  public int bindFence(PreparedStatement ps, int index) throws SQLException {
    ps.setInt(index, fenceKey[0]);
    ps.setInt(index + 1, fenceKey[1]);
    return index + 2;
  }

  /**
   * A boolean SQL expression, true while the epoch bound by {@link #bindEpochFence} is the
   * pipeline's and no take-over holds the fence; it takes the fence lock shared until the
   * transaction ends.
   */
  public String epochFenceSql() {
    return "("
        + fenceOnlySql().substring("SELECT ".length())
        + " AND "
        + epochPredicate(leaderTable)
        + ")";
  }

  /**
   * Binds the parameters of {@link #epochFenceSql()} for {@code epoch} from {@code index}; returns
   * the next index.
   */
  public int bindEpochFence(PreparedStatement ps, int index, long epoch) throws SQLException {
    int i = bindFence(ps, index);
    ps.setString(i, pipeline);
    ps.setLong(i + 1, epoch);
    return i + 2;
  }

  /**
   * In the caller's open transaction: takes the fence lock shared and tells whether {@code epoch}
   * is still the pipeline's and no take-over is under way ({@link #epochFenceSql()}), so that the
   * transaction's writes count only while it is.
   */
  public boolean epochFenceHolds(Connection c, long epoch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT " + epochFenceSql())) {
      bindEpochFence(ps, 1, epoch);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /**
   * A predicate true only while {@code epoch} is the pipeline's current epoch: {@code pipeline} and
   * {@code epoch} are bound as parameters, in that order.
   *
   * @param leaderTable the quoted lease table
   */
  public static String epochPredicate(String leaderTable) {
    return "EXISTS (SELECT 1 FROM " + leaderTable + " l WHERE l.pipeline = ? AND l.epoch = ?)";
  }

  private long validity() {
    return lease.toNanos() / 5 * 4;
  }

  private boolean tryLock(Connection session) throws SQLException {
    try (PreparedStatement ps = session.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
      ps.setLong(1, leaderKey);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /** Holding the leader lock: waits for the old epoch's claims (ending them if need be). */
  private void takeFence(Connection session) throws SQLException {
    try (Statement st = session.createStatement()) {
      st.execute("SET LOCAL lock_timeout = " + Math.max(1, fenceWait.toMillis()));
      // The session's statement_timeout (statement-timeout) may be shorter than the fence wait:
      // it would fail the wait before the old claims are ended. lock_timeout and the session's
      // network timeout bound this transaction instead.
      st.execute("SET LOCAL statement_timeout = 0");
    }
    for (int attempt = 1; ; attempt++) {
      try (Statement st = session.createStatement()) {
        st.execute("SAVEPOINT fence");
      }
      try (PreparedStatement ps = session.prepareStatement("SELECT pg_advisory_xact_lock(?, ?)")) {
        bindFence(ps, 1);
        ps.execute();
        return;
      } catch (SQLException e) {
        if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState()) || attempt >= TAKEOVER_TRIES) {
          throw e;
        }
        try (Statement st = session.createStatement()) {
          st.execute("ROLLBACK TO SAVEPOINT fence");
        }
        int ended = endFenceHolders(session);
        log.warn(
            "pipeline {}: claims of the previous active instance were still open after {} ms;"
                + " ended {} of their session(s) (their rows are claimed again)",
            pipeline,
            fenceWait.toMillis(),
            ended);
      }
    }
  }

  /** Ends the sessions holding the fence lock: claims of an instance that lost the lease. */
  private int endFenceHolders(Connection session) throws SQLException {
    String sql =
        "SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l"
            + " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2"
            + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            + " AND l.classid = ?::bigint::oid AND l.objid = ?::bigint::oid"
            + " AND l.pid <> pg_backend_pid()";
    try (PreparedStatement ps = session.prepareStatement(sql)) {
      ps.setLong(1, fenceKey[0] & 0xffff_ffffL);
      ps.setLong(2, fenceKey[1] & 0xffff_ffffL);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private long upsert(Connection session) throws SQLException {
    try (PreparedStatement ps =
        session.prepareStatement(
            "INSERT INTO "
                + leaderTable
                + " AS t (pipeline, epoch, holder, holder_pid, acquired_at, expires_at)"
                // A first row's epoch is the database clock in milliseconds, not 1: should the row
                // be deleted, the epoch still only grows, so an instance of an old epoch stays
                // fenced (a take-over raises it by one, far less than a millisecond's worth).
                + " VALUES (?, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint, ?,"
                + " pg_backend_pid(), clock_timestamp(),"
                + " clock_timestamp() + ?::bigint * interval '1 millisecond')"
                + " ON CONFLICT (pipeline) DO UPDATE SET epoch = t.epoch + 1,"
                + " holder = EXCLUDED.holder, holder_pid = EXCLUDED.holder_pid,"
                + " acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at"
                + " RETURNING epoch")) {
      ps.setString(1, pipeline);
      ps.setString(2, holder);
      ps.setLong(3, lease.toMillis());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private void rollbackQuietly(Connection session) {
    try {
      session.rollback();
    } catch (SQLException e) {
      log.debug("pipeline {}: rollback of a failed take-over: {}", pipeline, e.getMessage());
    }
  }

  private void unlockQuietly(Connection session) {
    try (PreparedStatement ps = session.prepareStatement("SELECT pg_advisory_unlock(?)")) {
      ps.setLong(1, leaderKey);
      ps.execute();
    } catch (SQLException e) {
      log.debug("pipeline {}: unlock after a failed take-over: {}", pipeline, e.getMessage());
    }
  }

  @Override
  public String toString() {
    return "lease of " + pipeline + " in " + displayLeaderTable;
  }
}
