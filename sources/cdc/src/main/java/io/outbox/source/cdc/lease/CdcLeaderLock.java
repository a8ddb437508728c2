package io.outbox.source.cdc.lease;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.CdcConnections;
import io.outbox.source.cdc.CdcSettings;
import io.outbox.source.postgres.LeaderLease;
import io.outbox.source.postgres.LeaseKeeper;
import io.outbox.source.postgres.LedgerWatermarks;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * "One active instance per pipeline" for the CDC source: a {@link LeaderLease} (the pipeline's
 * session advisory lock plus a lease row with an epoch), held on a dedicated session while this
 * instance streams and renewed by a daemon thread every {@code leadership-check-interval}. A
 * standby takes over from a holder that died or stopped renewing (frozen, cut off), and ends the
 * old holder's replication connection so the slot is free; every settlement and offset commit
 * checks the epoch in SQL ({@link #checkFence}), so a holder that wakes up cannot write.
 */
public final class CdcLeaderLock {

  private static final Logger log = LoggerFactory.getLogger(CdcLeaderLock.class);

  private final CdcConnections connections;
  private final CdcSettings settings;
  private final String pipeline;
  private final LeaseKeeper keeper;
  private final LeaderLease lease;
  private final QuietInserts wakeGate;
  private final Ticker ticker;

  public CdcLeaderLock(
      CdcConnections connections,
      OutboxTables tables,
      CdcSettings settings,
      String pipeline,
      DatabaseClock clock,
      Runnable abortConnections,
      Ticker ticker) {
    this.connections = connections;
    this.ticker = ticker;
    this.settings = settings;
    this.pipeline = pipeline;
    String leaderSessionName = tables.leaderSessionName(pipeline);
    this.wakeGate = new QuietInserts(tables, pipeline);
    this.keeper =
        new LeaseKeeper(
            tables,
            pipeline,
            "cdc",
            settings,
            connections.where(),
            // Named as status expects the leader sessions to be named (standbys are counted).
            () -> connections.dedicatedNamed(leaderSessionName),
            SourceException::new,
            new LeaseKeeper.Hooks() {
              @Override
              public void lost() {
                // Lanes in a statement on a dead network end now, not after socket-timeout.
                abortConnections.run();
              }

              @Override
              public void taken(Connection session) throws SQLException {
                clock.measure(session);
                wakeGate.take(session);
              }

              @Override
              public void renewed(Connection session) {
                try {
                  clock.measure(session);
                  wakeGate.take(session);
                } catch (SQLException e) {
                  // The next renewal tells whether the session is lost; the last offset holds
                  // meanwhile.
                  log.debug(
                      "pipeline {}: reading the database clock or taking the wake gate failed: {}",
                      pipeline,
                      e.getMessage());
                }
              }
            },
            ticker);
    this.lease = keeper.lease();
  }

  /** A stable 64-bit hash of {@code value}: the same on every instance and JVM. */
  public static long key(String value) {
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
   * Blocks until the lease is taken.
   *
   * @param standby called once when another instance holds the lease
   * @param closed when it turns true, gives up with an {@link InterruptedException}
   */
  public void acquire(Runnable standby, BooleanSupplier closed) throws InterruptedException {
    keeper.acquire(standby, closed);
  }

  /**
   * Holding the lease: ends the replication connection that still streams {@code slot} (the
   * instance before, frozen or cut off, whose session outlived its lease) and waits until the slot
   * is free, at most {@code lease-timeout}.
   *
   * @throws SourceException when the slot is still busy after that
   */
  public void freeSlot(String slot) throws InterruptedException {
    freeSlot(slot, "the instance before, frozen or cut off");
  }

  /**
   * As {@link #freeSlot(String)}, for a replication connection described as {@code whose} in the
   * log: also the one an engine of this instance left when its start was given up.
   */
  public void freeSlot(String slot, String whose) throws InterruptedException {
    Deadline deadline = ticker.deadline(settings.leaseTimeout());
    try (Connection c = connections.dedicated("take-over")) {
      c.setNetworkTimeout(Runnable::run, keeper.networkTimeoutMillis());
      boolean ended = false;
      while (true) {
        Integer pid = activePid(c, slot);
        if (pid == null) {
          return;
        }
        if (deadline.passed()) {
          throw new SourceException(
              "pipeline "
                  + pipeline
                  + ": slot "
                  + slot
                  + " is still streamed by session "
                  + pid
                  + " ("
                  + whose
                  + "), "
                  + settings.leaseTimeout().toMillis()
                  + " ms after ending it");
        }
        if (!ended) {
          log.warn(
              "pipeline {}: slot {} is still streamed by session {} ({}); ending it",
              pipeline,
              slot,
              pid,
              whose);
          try (PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
            ps.setInt(1, pid);
            ps.execute();
          }
          ended = true;
        }
        TimeUnit.MILLISECONDS.sleep(50);
      }
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": cannot free slot "
              + slot
              + " on "
              + connections.where()
              + " (the relay's role needs to be the other instance's role or a member of"
              + " pg_signal_backend): "
              + e.getMessage(),
          e);
    }
  }

  private static Integer activePid(Connection c, String slot) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT active_pid FROM pg_replication_slots WHERE slot_name = ? AND active")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        int pid = rs.getInt(1);
        return rs.wasNull() ? null : pid;
      }
    }
  }

  /**
   * In the caller's open transaction: takes the fence lock shared and checks that this instance's
   * epoch is still the pipeline's, so that the transaction's writes count only while it is.
   *
   * @throws SQLException when the epoch moved on (another instance took over) or a take-over is
   *     under way; the caller rolls back
   */
  public void checkFence(Connection c) throws SQLException {
    Fenced fenced = fenced();
    fenced.require(lease.epochFenceHolds(c, fenced.epoch), "not written");
  }

  /**
   * The check a settlement from the ledger makes in its transaction ({@link OutboxLedger}): the
   * epoch this instance holds now is still the pipeline's, and this instance counts its lease held.
   */
  public LedgerWatermarks.Fence ledgerFence() {
    if (!held()) {
      return null; // lost already: no database round trip (it may be cut off)
    }
    long epoch = lease.epoch();
    return c -> lease.epochFenceHolds(c, epoch) && held();
  }

  /**
   * A boolean SQL expression, true while the epoch bound by {@link Fenced#bind} is the pipeline's
   * and no take-over holds the fence; it takes the fence lock shared until the transaction ends.
   */
  public String fenceSql() {
    return lease.epochFenceSql();
  }

  /** The fence of this instance's current epoch, to check within a statement of the caller's. */
  public Fenced fenced() {
    return new Fenced(lease.epoch());
  }

  /** The parameters of {@link #fenceSql()} for one epoch, and what its value means. */
  public final class Fenced {
    private final long epoch;

    private Fenced(long epoch) {
      this.epoch = epoch;
    }

    /** Binds the expression's parameters from {@code index}; returns the next index. */
    public int bind(PreparedStatement ps, int index) throws SQLException {
      return lease.bindEpochFence(ps, index, epoch);
    }

    /**
     * @param passed the expression's value
     * @param outcome what the caller does then, for the message ({@code "not written"})
     * @throws SQLException when it is false, or this instance counts its lease lost
     */
    public void require(boolean passed, String outcome) throws SQLException {
      if (!held() || !passed) {
        throw new SQLException(
            "this instance's epoch "
                + epoch
                + " of pipeline "
                + pipeline
                + " is no longer current (another instance took over): "
                + outcome);
      }
    }
  }

  /**
   * Whether this instance holds the lease, as far as the last renewal knows and unless it ran out
   * since (a frozen process wakes up to {@code false}). No I/O.
   */
  public boolean held() {
    return keeper.held();
  }

  /** Gives leadership up and tries again only after {@code pause}, so that a standby takes over. */
  public void yieldFor(Duration pause) {
    keeper.yieldFor(pause);
  }

  /** Gives the lease up by ending its session. */
  public void release() {
    keeper.release();
  }

  /** Stops renewing without giving the lease up: what a frozen process does (tests). */
  public void stopRenewing() {
    keeper.stopRenewing();
  }

  /** Releases the lease and stops the watchdog. */
  public void close() {
    keeper.close();
  }
}
