package io.outbox.source.postgres;

import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.LaneFunction;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rows a pipeline settled by position ({@code on-publish = position}): the one definition of
 * which unwritten rows a lane's position covers, for everything that must tell a settled row from a
 * pending one without a write on it (the backlog figures, retention, a pipeline that leaves
 * settlement by position or changes its lane count).
 *
 * <p>A lane's position ({@code <outbox>_relay_position}: {@code settled}, {@code window_snapshot},
 * {@code after_id}) covers a row of the lane whose transaction the snapshot {@code settled} sees,
 * and a row of the window after it ({@code window_snapshot} sees its transaction) up to {@code
 * after_id}. Only rows nobody wrote are settled so: {@code published_at} and {@code
 * next_attempt_at} null (a row the relay had to write is settled by that write, as without
 * positions). With no position for the pipeline no row is covered. The statements join a row with
 * its lane's position (a few rows, read once), never probe the positions once per row.
 */
public final class LanePositions {

  private static final Logger log = LoggerFactory.getLogger(LanePositions.class);

  private final OutboxTables tables;
  private final String positions;
  private final String outbox;
  private final OutboxColumns columns;
  private final String leave;
  private final String leaveByDelete;
  private final String uncovered;

  public LanePositions(OutboxTables tables) {
    this.tables = tables;
    this.positions = tables.qualifiedPositionTable();
    this.outbox = tables.qualifiedTable();
    this.columns = tables.columns();
    String id = columns.id("o");
    this.leave =
        "WITH "
            + positionsCte()
            + " UPDATE "
            + outbox
            + " o SET published_at = now() FROM p WHERE "
            + ofRowsLane()
            + " AND o.published_at IS NULL AND o.next_attempt_at IS NULL AND "
            + covers();
    this.leaveByDelete =
        "WITH "
            + positionsCte()
            + " DELETE FROM "
            + outbox
            + " o USING p WHERE "
            + ofRowsLane()
            + " AND o.published_at IS NULL AND o.next_attempt_at IS NULL AND "
            + covers();
    this.uncovered =
        "(WITH "
            + positionsCte()
            + " SELECT "
            + id
            + " AS id, o.created_at, o.available_at FROM "
            + outbox
            + " o JOIN p ON "
            + ofRowsLane()
            + " WHERE o.tx >= ?::xid8 AND o.published_at IS NULL AND o.next_attempt_at IS NULL"
            + " AND NOT "
            + covers()
            + ")";
  }

  /**
   * A common table expression: {@code p}, the pipeline's positions, each with {@code p.lanes}, how
   * many the pipeline has (the lane count they were made for, whatever the configuration says now).
   * Materialized: the positions are read once, whatever the planner thinks of the rows they are
   * joined with (with statistics saying one row, it read them again for each of 2,000 rows). Bound:
   * the pipeline.
   */
  public String positionsCte() {
    return "p AS MATERIALIZED (SELECT q.*, count(*) OVER () AS lanes FROM "
        + positions
        + " q WHERE q.pipeline = ?)";
  }

  /** A join condition: {@code p} is the position of row {@code o}'s lane. */
  public String ofRowsLane() {
    return "p.lane = "
        + LaneFunction.sql(columns.aggregateType("o"), columns.aggregateId("o"), "p.lanes");
  }

  /**
   * Whether position {@code p} covers row {@code o} (true or false, never null: a row without
   * {@code tx} is not covered). Does not check that the row is unwritten.
   */
  public String covers() {
    return "coalesce(pg_visible_in_snapshot(o.tx, p.settled) OR (pg_visible_in_snapshot(o.tx,"
        + " p.window_snapshot) AND "
        + columns.id("o")
        + " <= p.after_id), false)";
  }

  /**
   * The status of {@code tables}' outbox counting, for a pipeline that settles by position, only
   * the rows its positions do not cover as pending: what {@code status}, the pending gauge, the
   * bench and the soak read.
   */
  public static OutboxStatus status(OutboxTables tables) {
    return new OutboxStatus(tables, new LanePositions(tables).uncovered());
  }

  /**
   * The pending rows of the outbox that no position of the pipeline covers, from transaction {@code
   * tx} on, as {@code SELECT id, created_at, available_at} (for {@code OutboxStatus}). Bound: the
   * pipeline, then the lowest transaction to read ({@code xid8} as text).
   */
  public String uncovered() {
    return uncovered;
  }

  /**
   * Checks that the outbox has a valid index on {@code tx}, without which every claim of a pipeline
   * settling by position reads the whole table.
   *
   * @throws IllegalStateException naming the table and what to run when it has none
   */
  public void requireIndex(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
                + " AND a.attnum = i.indkey[0] WHERE i.indrelid = to_regclass(?)"
                + " AND a.attname = 'tx' AND i.indisvalid AND i.indpred IS NULL")) {
      ps.setString(1, outbox);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException(
              "on-publish = position needs an index on "
                  + outbox
                  + " (tx), and the table has none: run outbox-relay migrate with this"
                  + " configuration (it builds one without blocking inserts; docs/operations.md)");
        }
      }
    }
  }

  /**
   * How many lanes the pipeline's positions are for: 0 when it never settled by position (or this
   * role may not read the positions: a pipeline that never settled by position needs no grant on
   * the table).
   */
  public int lanes(Connection c, String pipeline) throws SQLException {
    if (!OutboxStatus.positionsReadable(c, tables)) {
      return 0;
    }
    try (PreparedStatement ps =
        c.prepareStatement("SELECT count(*) FROM " + positions + " WHERE pipeline = ?")) {
      ps.setString(1, pipeline);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /**
   * Leaves settlement by position, in the caller's transaction: the rows the pipeline's positions
   * cover are marked published ({@code published_at = now()}) or deleted, as the pipeline's {@code
   * on-publish} would have done, and the positions are removed. Does nothing for a pipeline without
   * positions.
   *
   * @return the rows marked or deleted
   */
  public long leave(Connection c, String pipeline, boolean delete) throws SQLException {
    if (lanes(c, pipeline) == 0) {
      return 0;
    }
    long rows;
    try (PreparedStatement ps = c.prepareStatement(delete ? leaveByDelete : leave)) {
      ps.setString(1, pipeline);
      rows = ps.executeUpdate();
    }
    try (PreparedStatement ps =
        c.prepareStatement("DELETE FROM " + positions + " WHERE pipeline = ?")) {
      ps.setString(1, pipeline);
      ps.executeUpdate();
    }
    log.info(
        "pipeline {}: left settlement by position: the {} row(s) its lanes' positions settled"
            + " were {}",
        pipeline,
        rows,
        delete ? "deleted" : "marked published");
    return rows;
  }
}
