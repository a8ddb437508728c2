package io.outbox.source.polling;

import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.postgres.LanePositions;
import io.outbox.source.postgres.LeaderLease;
import io.outbox.source.postgres.LedgerWatermarks;
import io.outbox.source.postgres.OutboxVerdicts;
import io.outbox.source.postgres.OutstandingClaims;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens claims: on a pooled connection, a transaction that takes the lane's advisory lock, then
 * locks the lane's next claimable rows. Built at each activation, with the payload format found
 * then.
 */
final class ClaimTransactions implements PollingClaim.Owner {

  private static final Logger log = LoggerFactory.getLogger(ClaimTransactions.class);

  /** How often a lane without rows stores its position's turn, at most. */
  static final Duration IDLE_STORE_INTERVAL = Duration.ofSeconds(1);

  private static final long IDLE_STORE_NANOS = IDLE_STORE_INTERVAL.toNanos();

  private final DataSource pool;
  private final Ticker ticker;
  private final OutboxSql sql;
  private final OutboxVerdicts verdicts;
  private final PayloadFormat format;
  private final int laneLockKey;
  private final int lanes;
  private final OnPublish onPublish;
  private final String pipeline;
  private final String safeUrl;
  private final OutstandingClaims claims;
  private final LeaderLease lease;
  private final long epoch;
  private final LedgerWatermarks ledger;
  private final PositionClaims positions; // null unless on-publish = position
  private final LanePositions lanePositions;
  // Per lane, touched only by the lane's claim (one at a time): when its idle position was last
  // stored.
  private final long[] idleStoredAt;

  ClaimTransactions(
      DataSource pool,
      OutboxSql sql,
      PayloadFormat format,
      TableNames tables,
      int lanes,
      OnPublish onPublish,
      String pipeline,
      String safeUrl,
      OutstandingClaims claims,
      LeaderLease lease,
      Ticker ticker) {
    this.pool = pool;
    this.ticker = ticker;
    this.sql = sql;
    this.verdicts = new OutboxVerdicts(tables.outboxTables());
    this.format = format;
    this.laneLockKey = tables.laneLockKey();
    this.lanes = lanes;
    this.onPublish = onPublish;
    this.pipeline = pipeline;
    this.safeUrl = safeUrl;
    this.claims = claims;
    this.lease = lease;
    this.epoch = lease.epoch();
    this.ledger = new LedgerWatermarks(tables.outboxTables());
    this.lanePositions = new LanePositions(tables.outboxTables());
    this.idleStoredAt = new long[lanes];
    Arrays.fill(idleStoredAt, ticker.nanoTime() - IDLE_STORE_NANOS);
    this.positions =
        onPublish == OnPublish.POSITION ? new PositionClaims(tables, sql, lanes, pipeline) : null;
  }

  /**
   * Prepares the lanes' settlement at activation, in one transaction holding the fence: settling by
   * position, checks the index on {@code tx} and starts the lanes' positions (unless they run with
   * this lane count); otherwise leaves settlement by position if the pipeline used it before (the
   * rows its positions settled are marked or deleted).
   *
   * @throws SourceException when the database fails or the index is missing
   */
  void prepareSettlement() {
    try (Connection c = pool.getConnection()) {
      try {
        if (!tryLocks(c, 0, false)) {
          throw new SourceException(
              "pipeline " + pipeline + ": another instance is taking over; activating again");
        }
        if (positions != null) {
          lanePositions.requireIndex(c);
          if (positions.start(c)) {
            log.info(
                "pipeline {}: {} lane(s) now settle by position on {}", pipeline, lanes, sql.table);
          }
        } else {
          lanePositions.leave(c, pipeline, onPublish == OnPublish.DELETE);
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": preparing the lanes' settlement on "
              + sql.table
              + " failed: "
              + e.getMessage(),
          e);
    } catch (IllegalStateException e) {
      throw new SourceException("pipeline " + pipeline + ": " + e.getMessage(), e);
    }
  }

  /**
   * One claim transaction.
   *
   * @param stillLeader checked once rows are locked; when false they are given back
   * @param inFlight {@code null} for the lane's claim, which first takes the lane's advisory lock;
   *     for a claim made ahead, the lane's claim in flight, whose rows are left out (settling by
   *     position, the claim starts where that one moves the lane's position). That claim's
   *     transaction holds the lane's lock meanwhile; another instance that takes the lane later
   *     waits for this claim's row locks like for any other.
   * @return the claim, or {@code null} when there was nothing to claim, another instance holds the
   *     lane, or leadership was lost
   * @throws SourceException when the database fails
   */
  PollingClaim open(int lane, int maxEvents, BooleanSupplier stillLeader, PollingClaim inFlight) {
    if (!claims.openTransaction()) {
      return null; // retention is emptying a partition: the lanes are woken once it is done
    }
    boolean handedOut = false;
    try {
      PollingClaim claim = openCounted(lane, maxEvents, stillLeader, inFlight);
      handedOut = claim != null;
      return claim;
    } finally {
      if (!handedOut) {
        claims.closeTransaction();
      }
    }
  }

  private PollingClaim openCounted(
      int lane, int maxEvents, BooleanSupplier stillLeader, PollingClaim inFlight) {
    Connection c;
    try {
      c = pool.getConnection();
    } catch (SQLException e) {
      throw failure(lane, "no database connection to " + safeUrl, e);
    }
    try {
      long started = ticker.nanoTime();
      while (tryLocks(c, lane, inFlight == null)) {
        if (positions == null) {
          List<OutboxEvent> events =
              claimRows(c, lane, maxEvents, inFlight == null ? null : inFlight.ids());
          if (!events.isEmpty() && stillLeader.getAsBoolean()) {
            return new PollingClaim(this, lane, c, events, null, ticker.nanoTime() - started);
          }
          break;
        }
        PositionClaims.Read read = positions.read(c, lane, epoch, maxEvents, format, inFlight);
        if (!read.events().isEmpty()) {
          if (stillLeader.getAsBoolean()) {
            return new PollingClaim(
                this, lane, c, read.events(), read, ticker.nanoTime() - started);
          }
          break;
        }
        if (inFlight != null || !stillLeader.getAsBoolean()) {
          break;
        }
        if (read.passed().isEmpty()) {
          // Nothing to hand out and nothing passed: the lane has no row in the window. Its turn
          // is stored at most once per IDLE_STORE_INTERVAL, so that the position of a lane
          // without rows (a pipeline with fewer keys than lanes) still moves on, which retention
          // and status wait for, without a write per empty poll.
          long now = ticker.nanoTime();
          if (!read.to().equals(read.from())
              && now - idleStoredAt[lane] >= IDLE_STORE_NANOS
              && settleEmpty(c, lane, read)) {
            idleStoredAt[lane] = now;
            c.commit();
          }
          break;
        }
        // Only rows the position passes (held back by a retry, or delayed): they become
        // exceptions now, and the lane reads on, so a held key never stops the others.
        if (!settleEmpty(c, lane, read)) {
          break;
        }
        c.commit();
      }
      c.rollback();
    } catch (SQLException e) {
      discard(c);
      throw failure(lane, "claiming from " + sql.table + " failed", e);
    } catch (RuntimeException e) {
      discard(c);
      throw e;
    }
    closeQuietly(c);
    return null;
  }

  /**
   * Settles a position claim that hands nothing out: the position moves, passed rows wait. False,
   * writing nothing, when this instance was fenced meanwhile (the lane's lock keeps the position
   * from moving otherwise): a fenced instance's claim reads no rows, which looks like a window read
   * to its end.
   */
  private boolean settleEmpty(Connection c, int lane, PositionClaims.Read read)
      throws SQLException {
    try {
      positions.settle(c, lane, read, List.of());
      return true;
    } catch (PositionSettlement.PositionMoved e) {
      log.info("pipeline {} lane {}: {}; moving nothing", pipeline, lane, e.getMessage());
      return false;
    }
  }

  /** The claim of a pipeline that settles each row: the lane's next rows, locked. */
  private List<OutboxEvent> claimRows(Connection c, int lane, int maxEvents, Long[] inFlight)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(inFlight == null ? sql.claim : sql.claimAhead)) {
      int i = 1;
      if (lanes > 1) {
        ps.setInt(i++, lane);
      }
      ps.setString(i++, pipeline);
      ps.setLong(i++, epoch);
      if (inFlight != null) {
        ps.setArray(i++, c.createArrayOf("bigint", inFlight));
      }
      ps.setInt(i, maxEvents);
      try (ResultSet rs = ps.executeQuery()) {
        return EventRows.read(rs, format);
      }
    }
  }

  /**
   * Takes the fence lock, shared, and for a lane's claim ({@code laneLock}) the lane's lock: {@code
   * false} while an instance takes over the pipeline, or when another instance (one handing over)
   * holds the lane. The claim made ahead needs no lane lock (the lane's claim in flight holds it),
   * but it holds the fence: an instance taking over waits for it like for any claim, so it cannot
   * read the rows of a key while this instance may still settle the key's earlier events.
   */
  private boolean tryLocks(Connection c, int lane, boolean laneLock) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            laneLock ? OutboxSql.TRY_FENCE_AND_LANE_LOCK : OutboxSql.TRY_FENCE_LOCK)) {
      int i = lease.bindFence(ps, 1);
      if (laneLock) {
        ps.setInt(i++, laneLockKey);
        ps.setInt(i, lane);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1) && (!laneLock || rs.getBoolean(2));
      }
    }
  }

  private SourceException failure(int lane, String what, SQLException e) {
    return new SourceException(
        "pipeline " + pipeline + " lane " + lane + ": " + what + ": " + e.getMessage(), e);
  }

  @Override
  public OutboxSql sql() {
    return sql;
  }

  @Override
  public OutboxVerdicts verdicts() {
    return verdicts;
  }

  @Override
  public OnPublish onPublish() {
    return onPublish;
  }

  @Override
  public String pipeline() {
    return pipeline;
  }

  /**
   * Rolls back and returns the connection. A connection that broke was already marked as such by
   * the pool (from the SQL state of its error), which then closes it instead of reusing it.
   */
  @Override
  public void discard(Connection connection) {
    try {
      connection.rollback();
    } catch (SQLException | RuntimeException e) {
      log.debug("pipeline {}: rollback on a failed connection: {}", pipeline, e.getMessage());
    }
    closeQuietly(connection);
  }

  @Override
  public void closeQuietly(Connection connection) {
    try {
      connection.close();
    } catch (SQLException e) {
      log.debug("pipeline {}: closing a connection: {}", pipeline, e.getMessage());
    }
  }

  @Override
  public boolean leading() {
    return lease.held() && lease.epoch() == epoch;
  }

  @Override
  public long epoch() {
    return epoch;
  }

  @Override
  public PositionClaims positions() {
    return positions;
  }

  @Override
  public LedgerWatermarks ledger() {
    return ledger;
  }

  @Override
  public void ended(int lane) {
    claims.closeTransaction();
    claims.end(lane);
  }
}
