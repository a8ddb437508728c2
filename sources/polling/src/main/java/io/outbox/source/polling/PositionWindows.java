package io.outbox.source.polling;

import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.source.postgres.LanePositions;
import io.outbox.source.postgres.LeaderLease;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Settlement by position ({@code on-publish = position}; the tables are migration V8's): a lane's
 * published rows are settled by moving its {@link LanePosition} forward once per batch, not by a
 * write to each row.
 *
 * <p>Every row carries {@code tx}, the id of the transaction that inserted it ({@code xid8 DEFAULT
 * pg_current_xact_id()}). A lane reads the outbox in windows cut between two snapshots, as PgQ
 * does: the window {@code (settled, window]} holds the rows whose transaction committed after the
 * snapshot {@code settled} was taken and before {@code window} was. Within a window the rows are
 * read in id order, {@code after} being the last id read. A transaction that took a small id and
 * commits late falls in the window of its commit, so no row is skipped whatever order the ids
 * commit in, and a row of an open transaction is never read.
 *
 * <p>A window's first and last ids come from the index on {@code tx}: its transactions are those in
 * progress at {@code settled} ({@code pg_snapshot_xip}) and those from {@code settled}'s {@code
 * xmax} on, so a long open transaction does not widen it. The rows in it are then read by the
 * primary key between those ids.
 *
 * <p>The position moves by compare-and-set ({@link #advance}): a settlement made from a position
 * that is no longer the lane's (a claim ahead settled before the claim it follows, a second
 * settlement of one claim, a fenced instance's late one) changes nothing and is refused, so the
 * position never passes a row that was not settled.
 *
 * <p>Rows that cannot be settled by the position (a retry, a held-back key, a row not yet
 * available) are written once as exceptions ({@code next_attempt_at} set) and claimed as today;
 * {@link #start} places a pipeline's first positions before its oldest pending row, and turns the
 * pending rows no old position covers into exceptions when the lane count changes.
 */
final class PositionWindows {

  /** A lane's place: the settled snapshot, the window's snapshot and its id range. */
  record LanePosition(String settled, String window, long after, long last) {

    /** Whether every row of the window was read. */
    boolean exhausted() {
      return after >= last;
    }

    /** The same window, read up to {@code id}. */
    LanePosition readTo(long id) {
      return new LanePosition(settled, window, Math.max(after, id), last);
    }

    /** The same window, read to its end. */
    LanePosition readToEnd() {
      return new LanePosition(settled, window, last, last);
    }
  }

  private final int lanes;
  private final LanePositions positions;
  private final String read;
  private final String drop;
  private final String start;
  private final String firstStart;
  private final String convertUntracked;
  private final String convertPending;
  private final String turn;
  private final String advance;

  /**
   * @param tables the pipeline's tables
   * @param lanes the lane count; with one lane no lane predicate
   */
  PositionWindows(OutboxTables tables, int lanes) {
    String outbox = tables.qualifiedTable();
    String positions = tables.qualifiedPositionTable();
    OutboxColumns columns = tables.columns();
    this.lanes = lanes;
    this.positions = new LanePositions(tables);
    String id = columns.id("o");
    this.read =
        "SELECT settled::text, window_snapshot::text, after_id, last_id FROM "
            + positions
            + " WHERE pipeline = ? AND lane = ?";
    this.drop = "DELETE FROM " + positions + " WHERE pipeline = ?";
    this.start =
        "INSERT INTO "
            + positions
            + " (pipeline, lane, settled, window_snapshot, after_id, last_id)"
            + " SELECT ?, l, ?::pg_snapshot, ?::pg_snapshot, 0, 0 FROM generate_series(0, ? - 1) l";
    // A first start's snapshot sees every transaction before the oldest one that is in progress
    // or inserted a pending row, and none from there: every pending row is in its first window,
    // and read by the window, not made an exception (a backlog at the switch costs no write per
    // row). Its text is "xmin:xmax:" with both the same. ORDER BY, not min(): PostgreSQL 13 has
    // no min(xid8).
    this.firstStart =
        "SELECT least(pg_snapshot_xmin(pg_current_snapshot()), (SELECT o.tx FROM "
            + outbox
            + " o WHERE o.published_at IS NULL AND o.next_attempt_at IS NULL AND o.tx IS NOT NULL"
            + " ORDER BY o.tx LIMIT 1))::text";
    // Rows inserted before the column existed have no tx, so no window reads them: exceptions.
    this.convertUntracked =
        "UPDATE "
            + outbox
            + " o SET next_attempt_at = now()"
            + " WHERE o.tx IS NULL AND o.published_at IS NULL AND o.next_attempt_at IS NULL";
    // Started again for a new lane count: a pending row whose transaction the new start's snapshot
    // already sees would be passed by every window: it becomes an exception, claimed by its row as
    // before, unless the positions of the old lane count cover it. Rows without tx too.
    this.convertPending =
        "WITH "
            + this.positions.positionsCte()
            + " UPDATE "
            + outbox
            + " o SET next_attempt_at = now() FROM p"
            + " WHERE "
            + this.positions.ofRowsLane()
            + " AND o.published_at IS NULL AND o.next_attempt_at IS NULL"
            + " AND (o.tx IS NULL OR pg_visible_in_snapshot(o.tx, ?::pg_snapshot))"
            + " AND NOT "
            + this.positions.covers();
    // The statement's snapshot is the new window's: every row it sees of a transaction the window
    // sees is read, none of a transaction still open. OFFSET 0 keeps the window's rows a subquery
    // read through the index on tx: without it PostgreSQL turned min(id) into a walk of the primary
    // key from the table's first row, past every settled row (330 ms for a 1,000-row window in a
    // 1,000,000-row outbox, against 0.5 ms).
    this.turn =
        "SELECT s.w::text, coalesce(b.first - 1, 0), coalesce(b.last, 0)"
            + " FROM (SELECT pg_current_snapshot() AS w) s,"
            + " LATERAL (SELECT min(x.id) AS first, max(x.id) AS last FROM (SELECT "
            + id
            + " AS id FROM "
            + outbox
            + " o WHERE (o.tx >= pg_snapshot_xmax(?::pg_snapshot)"
            + " OR o.tx = ANY (ARRAY(SELECT pg_snapshot_xip(?::pg_snapshot))))"
            + " AND o.tx < pg_snapshot_xmax(s.w) AND pg_visible_in_snapshot(o.tx, s.w)"
            + " OFFSET 0) x) b";
    this.advance =
        "UPDATE "
            + positions
            + " SET settled = ?::pg_snapshot, window_snapshot = ?::pg_snapshot, after_id = ?,"
            + " last_id = ?, updated_at = clock_timestamp() WHERE pipeline = ? AND lane = ?"
            + " AND settled::text = ?"
            + " AND window_snapshot::text = ? AND after_id = ? AND "
            // Only the active instance moves a position. A fenced one reads no rows (the claim's
            // epoch predicate), which looks like a window read to its end: moved, it would pass
            // every row of the window unpublished.
            + LeaderLease.epochPredicate(tables.qualifiedLeaderTable());
  }

  /**
   * The rows of row alias {@code o} still to read in a window: after its {@code after} id up to its
   * {@code last}, of a transaction the window's snapshot sees and the settled one does not, and not
   * settled by a write. Bound in that order: after, last, the window's snapshot, the settled one.
   * The one definition of a window's rows; {@link OutboxSql#positionClaim} reads them.
   */
  static String windowPredicate(OutboxColumns columns) {
    String id = columns.id("o");
    return id
        + " > ? AND "
        + id
        + " <= ?\n"
        + "   AND pg_visible_in_snapshot(o.tx, ?::pg_snapshot)\n"
        + "   AND NOT pg_visible_in_snapshot(o.tx, ?::pg_snapshot)\n"
        + "   AND o.published_at IS NULL AND o.next_attempt_at IS NULL\n";
  }

  /** The statement {@link #turn} runs, bound with the settled window's snapshot twice. */
  String turnStatement() {
    return turn;
  }

  /** The lane's position, or null when it never settled by position. */
  LanePosition read(Connection c, String pipeline, int lane) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(read)) {
      ps.setString(1, pipeline);
      ps.setInt(2, lane);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next()
            ? new LanePosition(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4))
            : null;
      }
    }
  }

  /**
   * Makes the pipeline's lanes settle by position, in the caller's transaction, unless they already
   * do with this lane count. A first start reads every pending row in its first windows (rows
   * without {@code tx} become exceptions). Started again for a new lane count, the positions start
   * at the present snapshot, and the pending rows it sees that no old position covers become
   * exceptions.
   *
   * @return whether the positions were started (or started again for a new lane count)
   */
  boolean start(Connection c, String pipeline) throws SQLException {
    int had = positions.lanes(c, pipeline);
    if (had == lanes) {
      return false;
    }
    String from;
    if (had == 0) {
      String xid;
      try (PreparedStatement ps = c.prepareStatement(firstStart);
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        xid = rs.getString(1);
      }
      from = xid + ":" + xid + ":";
      try (PreparedStatement ps = c.prepareStatement(convertUntracked)) {
        ps.executeUpdate();
      }
    } else {
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_current_snapshot()::text");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        from = rs.getString(1);
      }
      try (PreparedStatement ps = c.prepareStatement(convertPending)) {
        ps.setString(1, pipeline);
        ps.setString(2, from);
        ps.executeUpdate();
      }
    }
    try (PreparedStatement ps = c.prepareStatement(drop)) {
      ps.setString(1, pipeline);
      ps.executeUpdate();
    }
    try (PreparedStatement ps = c.prepareStatement(start)) {
      ps.setString(1, pipeline);
      ps.setString(2, from);
      ps.setString(3, from);
      ps.setInt(4, lanes);
      ps.executeUpdate();
    }
    return true;
  }

  /** The next window after {@code from}'s (which must be exhausted), not stored. */
  LanePosition turn(Connection c, LanePosition from) throws SQLException {
    if (!from.exhausted()) {
      throw new IllegalStateException("the window is not read to its end: " + from);
    }
    try (PreparedStatement ps = c.prepareStatement(turn)) {
      ps.setString(1, from.window());
      ps.setString(2, from.window());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new LanePosition(from.window(), rs.getString(1), rs.getLong(2), rs.getLong(3));
      }
    }
  }

  /**
   * Moves the lane's position from {@code from} to {@code to}, in the caller's transaction, for the
   * instance of {@code epoch}.
   *
   * @return false, changing nothing, when the lane's position is no longer {@code from} or {@code
   *     epoch} is no longer the pipeline's (another instance took over)
   */
  boolean advance(
      Connection c, String pipeline, int lane, long epoch, LanePosition from, LanePosition to)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(advance)) {
      ps.setString(1, to.settled());
      ps.setString(2, to.window());
      ps.setLong(3, to.after());
      ps.setLong(4, to.last());
      ps.setString(5, pipeline);
      ps.setInt(6, lane);
      ps.setString(7, from.settled());
      ps.setString(8, from.window());
      ps.setLong(9, from.after());
      ps.setString(10, pipeline);
      ps.setLong(11, epoch);
      return ps.executeUpdate() == 1;
    }
  }
}
