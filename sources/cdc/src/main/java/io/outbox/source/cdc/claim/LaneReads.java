package io.outbox.source.cdc.claim;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.engine.StreamSession;
import io.outbox.source.cdc.lease.CdcLeaderLock;
import io.outbox.source.cdc.lease.DatabaseClock;
import io.outbox.source.cdc.stream.ChangeStream;
import io.outbox.source.cdc.stream.ParkedRows;
import io.outbox.source.cdc.stream.TransactionSnapshot;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What a claim of the CDC source reads from the outbox table for its lane: the rows of the events
 * it just took from the stream (published, due later or unseen meanwhile: {@link CurrentRows},
 * {@link UnseenRows}), and the parked rows of a released key ({@link ParkedRows}). Each read is one
 * round trip on a pool connection; when one fails the events go back to the lane, and a session
 * that ended meanwhile is stopped ({@code checkActive}) before the claim fails.
 */
public final class LaneReads {

  private final String pipeline;
  private final OutboxTables tables;
  private final Supplier<HikariDataSource> pool;
  private final CdcLeaderLock leader;
  private final Consumer<StreamSession> checkActive;
  private final CurrentRows rows;
  private final ParkedRows parkedRows;
  private final UnseenRows unseen;

  /**
   * @param pool the source's pool, {@code null} before the activation and once closed
   * @param checkActive throws when the session ended (failed engine, lost leader lock)
   */
  public LaneReads(
      String pipeline,
      OutboxTables tables,
      Supplier<HikariDataSource> pool,
      CdcLeaderLock leader,
      DatabaseClock clock,
      Ticker ticker,
      Consumer<StreamSession> checkActive) {
    this.pipeline = pipeline;
    this.tables = tables;
    this.pool = pool;
    this.leader = leader;
    this.checkActive = checkActive;
    this.rows = new CurrentRows(tables, leader.fenceSql());
    this.parkedRows = new ParkedRows(tables);
    this.unseen = new UnseenRows(pipeline, clock, ticker);
  }

  /** Forgets what it noted of unseen rows: a new session's events are new. */
  public void clear() {
    unseen.clear();
  }

  /**
   * The taken events as their rows say now ({@link ChangeStream#checked}); on failure they go back
   * to the lane.
   */
  List<ChangeStream.Item> current(StreamSession s, int lane, List<ChangeStream.Item> items) {
    Map<Long, ChangeStream.Row> pending;
    try {
      pending = unseen.pending(items, readRows(items));
    } catch (SQLException | RuntimeException e) {
      s.stream().released(lane, items);
      checkActive.accept(s);
      if (e instanceof RuntimeException r) {
        throw r;
      }
      throw new SourceException(
          "pipeline "
              + pipeline
              + " lane "
              + lane
              + ": reading the rows of "
              + items.size()
              + " streamed event(s) in "
              + tables.displayTable()
              + " failed: "
              + e.getMessage(),
          e);
    }
    return s.stream().checked(lane, items, pending);
  }

  private CurrentRows.Read readRows(List<ChangeStream.Item> items) throws SQLException {
    try (Connection c = autoCommit()) {
      // One round trip: the statement takes the fence lock and ends with it.
      return rows.read(c, leader.fenced(), items);
    }
  }

  /** A pool connection in auto-commit (the pool restores manual commit when it goes back). */
  private Connection autoCommit() throws SQLException {
    HikariDataSource p = pool.get();
    if (p == null) {
      throw new SQLException("source closed");
    }
    Connection c = p.getConnection();
    try {
      c.setAutoCommit(true);
      return c;
    } catch (SQLException e) {
      c.close();
      throw e;
    }
  }

  /**
   * Reads back a batch of the parked rows of a key of {@code lane} that is no longer held back
   * ({@link ParkedRows}), if any, into the lane.
   *
   * @return whether the read waits for a commit still in progress (a parked event's transaction,
   *     streamed but not visible yet): the caller tries again a moment later
   */
  boolean readBackParked(StreamSession s, int lane) {
    ParkedRows.Request request = s.stream().parkedToRead(lane);
    if (request == null) {
      return false;
    }
    List<ParkedRows.Row> read;
    try (Connection c = autoCommit()) {
      if (request.checkCommits()
          && !s.stream().parkedReadable(lane, request, TransactionSnapshot.current(c))) {
        return true;
      }
      read = parkedRows.read(c, request);
    } catch (SQLException e) {
      checkActive.accept(s);
      throw new SourceException(
          "pipeline "
              + pipeline
              + " lane "
              + lane
              + ": reading back the held-back events of one key from "
              + tables.displayTable()
              + " failed: "
              + e.getMessage(),
          e);
    }
    s.stream().readBack(lane, request, read);
    return false;
  }
}
