package io.outbox.admin;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the state of one pipeline's outbox from the database: its backlog (pending rows, the oldest
 * one's age, retries, dead letters, the last error) and which relay instances serve it. The one
 * place of this SQL, used by the sources for {@code /metrics} and by the {@code status} command.
 *
 * <p>Every figure comes from an index of the migration (the pending and retrying partial indexes,
 * the dead-letter table's {@code dead_lettered_at} index) or a small table scan of the dead-letter
 * table, so that reading it every few seconds stays cheap with a million published rows kept.
 */
public final class OutboxStatus {

  /**
   * How the {@code last_error} of a dead letter the move could not take begins: the sources write
   * it, {@code status} counts the rows that carry it.
   */
  public static final String MOVE_FAILED = "dead-letter move failed: ";

  private static final Logger log = LoggerFactory.getLogger(OutboxStatus.class);

  /** Opens a connection of the caller's pool or settings. */
  @FunctionalInterface
  public interface ConnectionOpener {
    Connection open() throws SQLException;
  }

  /**
   * The backlog of an outbox.
   *
   * @param pending rows with {@code published_at IS NULL}, less those the pipeline's lane positions
   *     cover when it settles by position
   * @param oldestPendingAge now minus {@code created_at} of the oldest due pending row, by the
   *     database clock; zero when none is due
   * @param retrying pending rows with {@code next_attempt_at} set that failed at least once
   * @param deadLetters rows of the pipeline in the dead-letter table
   * @param lastError the {@code last_error} of the retrying row retried last, else of the
   *     pipeline's newest dead letter; {@code null} when there is neither
   * @param deadLetterMoveFailed retrying rows that are there because the dead-letter table refused
   *     them ({@code last_error} begins with {@link #MOVE_FAILED})
   */
  public record Backlog(
      long pending,
      Duration oldestPendingAge,
      long retrying,
      long deadLetters,
      String lastError,
      long deadLetterMoveFailed) {

    /** A backlog without dead letters the dead-letter table refused. */
    public Backlog(
        long pending,
        Duration oldestPendingAge,
        long retrying,
        long deadLetters,
        String lastError) {
      this(pending, oldestPendingAge, retrying, deadLetters, lastError, 0);
    }
  }

  /**
   * The relay instances of a pipeline, as the database sees them.
   *
   * @param active whether a session holds the pipeline's leader lock
   * @param connected sessions named {@link OutboxTables#leaderSessionName} (the active one and the
   *     standbys)
   */
  public record Instances(boolean active, int connected, Lease lease) {

    /** Instances without a lease row (none was ever taken). */
    public Instances(boolean active, int connected) {
      this(active, connected, null);
    }

    /** Instances connected but not holding the lock. */
    public int standbys() {
      return Math.max(0, connected - (active ? 1 : 0));
    }

    /**
     * {@code active}, {@code standby} (connected, none holding the lock) or {@code not running}.
     */
    public String role() {
      return active ? "active" : connected > 0 ? "standby" : "not running";
    }
  }

  /**
   * The pipeline's leader lease ({@code <table>_relay_leader}), see {@link LeaderLease}.
   *
   * @param epoch the epoch of the instance that took it last
   * @param holder that instance, {@code host/pid}
   * @param expiresIn how long until it expires on the database clock; negative once expired (the
   *     holder stopped renewing: it stopped, froze or is cut off)
   */
  public record Lease(long epoch, String holder, Duration expiresIn) {}

  private final OutboxTables tables;
  private final String backlogSql;
  private final String positionedBacklogSql; // null: positions are not read

  /**
   * The status of an outbox whose pipelines settle each row ({@code on-publish = mark | delete}).
   */
  public OutboxStatus(OutboxTables tables) {
    this(tables, null);
  }

  /**
   * The status of an outbox whose pipelines may settle by position.
   *
   * @param uncoveredRows the pending rows no lane position of the pipeline covers, from a
   *     transaction on: an SQL query of {@code id, created_at, available_at} binding the pipeline,
   *     then the transaction ({@code LanePositions#uncovered}); {@code null} to read no positions
   */
  public OutboxStatus(OutboxTables tables, String uncoveredRows) {
    this.tables = tables;
    String outbox = tables.qualifiedTable();
    String deadLetters = tables.qualifiedDeadLetterTable();
    String retrying = " WHERE published_at IS NULL AND next_attempt_at IS NOT NULL";
    // Rows made exceptions by a pipeline settling by position (held back, delayed, released) have
    // next_attempt_at set without having failed.
    String failed = retrying + " AND attempts > 0";
    String id = tables.columns().id("o");
    String rest =
        "       (SELECT count(*) FROM "
            + outbox
            + failed
            + "),\n"
            + "       (SELECT count(*) FROM "
            + deadLetters
            + " WHERE pipeline = ?),\n"
            + "       coalesce((SELECT last_error FROM "
            + outbox
            + retrying
            + " AND last_error IS NOT NULL ORDER BY next_attempt_at DESC LIMIT 1),\n"
            + "                (SELECT last_error FROM "
            + deadLetters
            + " WHERE pipeline = ? ORDER BY dead_lettered_at DESC LIMIT 1)),\n"
            // A constant prefix: a filter on the retrying index's few rows.
            + "       (SELECT count(*) FROM "
            + outbox
            + retrying
            + " AND last_error LIKE '"
            + MOVE_FAILED
            + "%')";
    this.backlogSql =
        "SELECT (SELECT count(*) FROM "
            + outbox
            + " WHERE published_at IS NULL),\n"
            // The lowest pending id that is due: a walk of the pending index from its start.
            + "       (SELECT greatest(0, extract(epoch FROM now() - o.created_at)) FROM "
            + outbox
            + " o WHERE o.published_at IS NULL AND o.available_at <= now()"
            + " ORDER BY "
            + id
            + " LIMIT 1),\n"
            + rest;
    // Settling by position, a pending row is an exception or a row no position covers yet; every
    // row of a transaction below the lowest xmin of the lanes' settled snapshots is covered, so
    // the second branch reads the index on tx from there. Bound first: the pipeline, that xmin.
    this.positionedBacklogSql =
        uncoveredRows == null
            ? null
            : "WITH pending AS MATERIALIZED (\n"
                + "  SELECT "
                + id
                + " AS id, o.created_at, o.available_at FROM "
                + outbox
                + " o WHERE o.published_at IS NULL AND o.next_attempt_at IS NOT NULL\n"
                + "  UNION ALL\n  "
                + uncoveredRows
                + ")\n"
                + "SELECT (SELECT count(*) FROM pending),\n"
                + "       (SELECT greatest(0, extract(epoch FROM now() - p.created_at)) FROM"
                + " pending p WHERE p.available_at <= now() ORDER BY p.id LIMIT 1),\n"
                + rest;
  }

  /** The statement behind {@link #backlog}, for {@code EXPLAIN}; binds the pipeline twice. */
  public String backlogSql() {
    return backlogSql;
  }

  /**
   * The statement behind {@link #backlog} for a pipeline with lane positions, for {@code EXPLAIN};
   * binds the pipeline, the lowest xmin of its settled snapshots, then the pipeline twice.
   */
  public String positionedBacklogSql() {
    return positionedBacklogSql;
  }

  /**
   * Reads the backlog in one statement.
   *
   * @param pipeline the pipeline name, as written in the dead-letter table's {@code pipeline}
   */
  public Backlog backlog(Connection connection, String pipeline) throws SQLException {
    String xmin = positionedBacklogSql == null ? null : settledXmin(connection, tables, pipeline);
    try (PreparedStatement ps =
        connection.prepareStatement(xmin == null ? backlogSql : positionedBacklogSql)) {
      int i = 1;
      if (xmin != null) {
        ps.setString(i++, pipeline);
        ps.setString(i++, xmin);
      }
      ps.setString(i++, pipeline);
      ps.setString(i, pipeline);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        double oldestSeconds = rs.getDouble(2); // NULL (nothing due) reads as 0
        return new Backlog(
            rs.getLong(1),
            Duration.ofNanos(Math.round(oldestSeconds * 1e9)),
            rs.getLong(3),
            rs.getLong(4),
            rs.getString(5),
            rs.getLong(6));
      }
    }
  }

  /**
   * Whether this session's role may read the outbox's lane positions. A pipeline that never settled
   * by position needs no grant on the table: without one, its positions read as none.
   */
  public static boolean positionsReadable(Connection connection, OutboxTables tables)
      throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement("SELECT has_table_privilege(?, 'SELECT')")) {
      ps.setString(1, tables.qualifiedPositionTable());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /**
   * The lowest xmin of the settled snapshots of {@code pipeline}'s lanes, as text: every row of a
   * transaction below it that no one wrote is settled by position. Null when the pipeline has no
   * positions, or this role may not read them ({@link #positionsReadable}).
   */
  public static String settledXmin(Connection connection, OutboxTables tables, String pipeline)
      throws SQLException {
    if (!positionsReadable(connection, tables)) {
      return null;
    }
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT min(pg_snapshot_xmin(settled))::text FROM "
                + tables.qualifiedPositionTable()
                + " WHERE pipeline = ?")) {
      ps.setString(1, pipeline);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  public boolean handOver(ConnectionOpener opener, String pipeline, Duration pause, String why) {
    try (Connection c = opener.open()) {
      c.setNetworkTimeout(Runnable::run, (int) Math.max(1000, pause.toMillis() / 2));
      if (instances(c, pipeline).standbys() == 0) {
        return false;
      }
    } catch (SQLException | RuntimeException e) {
      log.debug("pipeline {}: cannot count the standbys, yielding: {}", pipeline, e.getMessage());
    }
    log.warn(
        "pipeline {}: giving the active role up for {} ms so that a standby takes over: {}",
        pipeline,
        pause.toMillis(),
        why);
    return true;
  }

  /**
   * Which relay instances serve {@code pipeline}: the holder of its leader lock ({@code pg_locks})
   * and the sessions named after it ({@code pg_stat_activity}).
   */
  public Instances instances(Connection connection, String pipeline) throws SQLException {
    long key = tables.leaderLockKey(pipeline);
    // A bigint advisory lock shows in pg_locks as classid = high 32 bits, objid = low 32 bits,
    // objsubid = 1.
    String sql =
        "SELECT EXISTS (SELECT 1 FROM pg_locks l"
            + " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
            + " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            + " AND l.classid = ?::bigint::oid AND l.objid = ?::bigint::oid),"
            + " (SELECT count(*) FROM pg_stat_activity"
            + " WHERE datname = current_database() AND application_name = ?)";
    try (PreparedStatement ps = connection.prepareStatement(sql)) {
      ps.setLong(1, key >>> 32);
      ps.setLong(2, key & 0xffff_ffffL);
      ps.setString(3, tables.leaderSessionName(pipeline));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Instances(rs.getBoolean(1), rs.getInt(2), lease(connection, pipeline));
      }
    }
  }

  /** The pipeline's lease row; {@code null} when there is none (or no table: before V4). */
  private Lease lease(Connection connection, String pipeline) throws SQLException {
    String table = tables.qualifiedLeaderTable();
    try (PreparedStatement ps = connection.prepareStatement("SELECT to_regclass(?)")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (rs.getString(1) == null) {
          return null;
        }
      }
    }
    try (PreparedStatement ps =
        connection.prepareStatement(
            "SELECT epoch, holder, EXTRACT(EPOCH FROM expires_at - now()) FROM "
                + table
                + " WHERE pipeline = ?")) {
      ps.setString(1, pipeline);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        return new Lease(
            rs.getLong(1), rs.getString(2), Duration.ofMillis(Math.round(rs.getDouble(3) * 1000)));
      }
    }
  }
}
