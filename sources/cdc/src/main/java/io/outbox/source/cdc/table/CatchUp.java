package io.outbox.source.cdc.table;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.CdcConnections;
import io.outbox.source.cdc.CdcSettings;
import io.outbox.source.cdc.lease.Fence;
import io.outbox.source.cdc.stream.CaughtUpIds;
import io.outbox.source.cdc.stream.ChangeStream;
import io.outbox.source.cdc.stream.OutboxRows;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The catch-up at an activation. For a new slot, whose stream does not hold the rows committed
 * before it existed: every row still unpublished with an id up to the highest at the slot's
 * creation is read from the table in id order, page by page as the lanes take them (memory stays
 * bounded whatever the backlog), and handed to the lanes ahead of the streamed events, which wait
 * until it is read. A marker in the offsets table ({@link CatchUpMarker}) — written before the slot
 * is created, bounded by that id once the slot exists, removed once every caught-up row has a final
 * verdict — makes an instance killed in the middle resume the catch-up at its next activation; rows
 * published meanwhile are not read again.
 *
 * <p>Every page is read in one snapshot (exported by a transaction that stays open, touching no
 * table, until the last page is read; each page read in a short transaction of its own that imports
 * it, so no table lock is held while the lanes take a page), so that what the catch-up hands out is
 * what was committed at one moment: a row that commits while the pages are read reaches the lanes
 * by the stream only, behind the catch-up, with the later rows of its key. Read page by page
 * without it, a key's later row, committed after a page holding its earlier one was read, would be
 * handed out by the next page ahead of the earlier one (issue #29). The snapshot holds back vacuum
 * until the last page is read. Should a read fail midway, the next snapshot is read from the start,
 * skipping the rows handed out already, for the same reason. For a slot that exists, every row
 * pending at the activation is read the same way (no marker: the next activation reads again
 * whatever is pending then), so that a row the stream's stored position has passed is still
 * published ahead of the later streamed events of its key.
 */
public final class CatchUp {

  private static final Logger log = LoggerFactory.getLogger(CatchUp.class);

  private static final int PAGE = 500;
  private static final Duration RETRY = Duration.ofSeconds(1);

  private final CdcConnections connections;
  private final CdcSettings settings;
  private final OutboxTables tables;
  private final String pipeline;
  private final ChangeStream<?> stream;
  private final Fence fence;
  private final Clock clock;
  private final Ticker ticker;
  private final long upTo;
  private final boolean marked;
  private final OutboxRows rows;

  /**
   * What an activation catches up: the rows up to id {@code upTo}; {@code marked} when the marker
   * of a new slot's catch-up is set (cleared once they are final).
   */
  public record Bound(long upTo, boolean marked) {}

  public CatchUp(
      CdcConnections connections,
      CdcSettings settings,
      OutboxTables tables,
      String pipeline,
      ChangeStream<?> stream,
      Fence fence,
      Clock clock,
      Ticker ticker,
      Bound bound) {
    this.connections = connections;
    this.settings = settings;
    this.tables = tables;
    this.pipeline = pipeline;
    this.stream = stream;
    this.fence = fence;
    this.clock = clock;
    this.ticker = ticker;
    this.upTo = bound.upTo();
    this.marked = bound.marked();
    this.rows = new OutboxRows(tables);
  }

  /**
   * Reads the rows into the lanes, lets the stream flow once they are in, and removes the marker
   * once every one of them is final. Runs on the session's catch-up thread until the stream closes.
   */
  public void run() {
    long started = ticker.nanoTime();
    try {
      long[] counts = read();
      if (counts == null) {
        return; // closed
      }
      stream.caughtUpRead(counts[2] == Long.MIN_VALUE ? null : Instant.ofEpochMilli(counts[2]));
      if (counts[0] + counts[1] > 0) {
        log.info(
            "pipeline {}: read {} unpublished row(s) of {} up to id {}, {} slot {}, to publish"
                + " ahead of its stream{}",
            pipeline,
            counts[0],
            tables.displayTable(),
            upTo,
            marked ? "committed before" : "pending at the activation on",
            settings.slotName(),
            counts[1] == 0
                ? ""
                : " ("
                    + counts[1]
                    + " due beyond reconcile-after are left to the reconcile sweep)");
      }
      if (!stream.awaitCaughtUpFinal()) {
        return;
      }
      while (marked && !clearMarker()) {
        TimeUnit.MILLISECONDS.sleep(RETRY.toMillis());
      }
      if (counts[0] > 0) {
        log.info(
            "pipeline {}: caught up {} row(s) in {} ms",
            pipeline,
            counts[0],
            TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - started));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Hands every pending row up to the bound to the lanes.
   *
   * @return rows handed over, rows left to the sweep and the database time (ms) after the last read
   *     ({@code Long.MIN_VALUE} when it could not be read); {@code null} when the stream closed
   */
  private long[] read() throws InterruptedException {
    Handed handed = new Handed();
    long handedCount = 0;
    long deferred = 0;
    while (true) {
      long after = Long.MIN_VALUE;
      Connection holder = null;
      Connection reader = null;
      try {
        holder = connections.dedicated("catch-up");
        String snapshot = exportSnapshot(holder);
        reader = connections.dedicatedReader("catch-up read");
        String sql = // before the reader's first transaction, which must import the snapshot first
            "SELECT "
                + rows.columns(reader)
                + ", o.available_at, o.next_attempt_at FROM "
                + tables.qualifiedTable()
                + " o WHERE o.published_at IS NULL AND "
                + tables.columns().id("o")
                + " > ? AND "
                + tables.columns().id("o")
                + " <= ? ORDER BY "
                + tables.columns().id("o")
                + " LIMIT "
                + PAGE;
        reader.setAutoCommit(false);
        reader.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        reader.setReadOnly(true);
        while (true) {
          List<Read> page = readPage(reader, snapshot, sql, after);
          for (Read r : page) {
            after = r.event().id();
            if (handed.contains(after)) {
              continue; // handed out before a failed read
            }
            if (dueBeyondHorizon(r.available(), r.retryAt())) {
              deferred++;
            } else if (stream.offerCaughtUp(r.event(), r.available(), r.retryAt())) {
              handed.add(after);
              handedCount++;
            } else {
              return null;
            }
          }
          if (page.size() < PAGE) {
            long readAt = databaseMillis(reader);
            holder.commit();
            return new long[] {handedCount, deferred, readAt};
          }
        }
      } catch (SQLException e) {
        log.warn(
            "pipeline {}: reading rows to catch up failed after id {}, reading again from the"
                + " start: {}",
            pipeline,
            after,
            e.getMessage());
        deferred = 0;
        TimeUnit.MILLISECONDS.sleep(RETRY.toMillis());
      } finally {
        close(reader);
        close(holder);
      }
    }
  }

  /** A row read by a page: the event and when it is due. */
  private record Read(OutboxEvent event, Instant available, Instant retryAt) {}

  /**
   * Opens the transaction whose snapshot every page is read in, on {@code holder}, and exports that
   * snapshot. It touches no table, so it holds no lock a schema change would wait for; it stays
   * open, idle, until the last page is read.
   */
  private static String exportSnapshot(Connection holder) throws SQLException {
    holder.setAutoCommit(false);
    holder.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
    try (Statement st = holder.createStatement()) {
      // Idle while the lanes take the pages: not a session to end.
      st.execute("SET LOCAL idle_in_transaction_session_timeout = 0");
      if (holder.getMetaData().getDatabaseMajorVersion() >= 17) {
        st.execute("SET LOCAL transaction_timeout = 0");
      }
      try (ResultSet rs = st.executeQuery("SELECT pg_export_snapshot()")) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  /**
   * The page after id {@code after}, read in the exported {@code snapshot} in a transaction of its
   * own, ended before the rows go to the lanes: the table's lock is held while a page is read, not
   * while the lanes take it.
   */
  private List<Read> readPage(Connection reader, String snapshot, String sql, long after)
      throws SQLException {
    List<Read> page = new ArrayList<>(PAGE);
    try {
      try (Statement st = reader.createStatement()) {
        st.execute("SET TRANSACTION SNAPSHOT '" + snapshot.replace("'", "''") + "'");
      }
      try (PreparedStatement ps = reader.prepareStatement(sql)) {
        ps.setLong(1, after);
        ps.setLong(2, upTo);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            page.add(new Read(rows.event(rs), instant(rs, 11), instant(rs, 12)));
          }
        }
      }
      reader.commit();
    } catch (SQLException e) {
      reader.rollback();
      throw e;
    }
    return page;
  }

  /**
   * The ids a catch-up handed out: in id order as runs ({@link CaughtUpIds}), and those a read
   * after a failure found below the last one (rows that became visible in its new snapshot) apart.
   */
  private static final class Handed {
    private final CaughtUpIds inOrder = new CaughtUpIds();
    private final Set<Long> below = new HashSet<>();

    void add(long id) {
      if (!inOrder.add(id)) {
        below.add(id);
      }
    }

    boolean contains(long id) {
      return inOrder.contains(id) || below.contains(id);
    }
  }

  /**
   * The database's clock now, in ms (rounded up: a heartbeat emitted later never reads earlier), or
   * {@code Long.MIN_VALUE} when it cannot be read: the stream then keeps the ids of the rows handed
   * until the session ends.
   */
  private long databaseMillis(Connection c) {
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT ceil(extract(epoch FROM clock_timestamp()) * 1000)::bigint")) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      log.debug("pipeline {}: reading the database clock failed: {}", pipeline, e.getMessage());
      return Long.MIN_VALUE;
    }
  }

  /** As the stream: a row due beyond reconcile-after is the sweep's, not held in memory. */
  private boolean dueBeyondHorizon(Instant available, Instant retryAt) {
    if (settings.reconcileAfter().isZero()) {
      return false;
    }
    Instant horizon = clock.instant().plus(settings.reconcileAfter());
    return available != null && available.isAfter(horizon)
        || retryAt != null && retryAt.isAfter(horizon);
  }

  /**
   * Whether the marker was cleared. Retried until the session stops: an instance that lost the
   * lease meanwhile stops, and the one that took over resumes the catch-up (nothing left to read).
   */
  private boolean clearMarker() {
    try (Connection c = connections.dedicated("catch-up")) {
      CatchUpMarker.clear(c, fence, tables, pipeline);
      return true;
    } catch (SQLException e) {
      log.warn("pipeline {}: ending the catch-up failed, retrying: {}", pipeline, e.getMessage());
      return false;
    }
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  private static void close(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        // The session is gone either way.
      }
    }
  }
}
