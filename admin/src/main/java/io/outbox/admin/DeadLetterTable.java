package io.outbox.admin;

import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * Every statement on one pipeline's dead-letter table: list, replay into the outbox, purge. Each
 * action is one transaction on the caller's connection, committed before the method returns (or
 * rolled back when it fails), so it touches all the rows it reports or none.
 *
 * <p>Replay moves rows back into the outbox with their original {@code event_id} (consumers can
 * still deduplicate), aggregate, type, destination, payload, headers and {@code created_at}; {@code
 * attempts} is 0 and {@code next_attempt_at}, {@code last_error} and {@code published_at} are null.
 * A replayed event gets a new outbox {@code id}: it is published after the events of its key that
 * are already in the outbox, and replayed events of one key keep their original order among
 * themselves. A dead letter whose {@code event_id} is already in the outbox is skipped and stays
 * where it is.
 */
public final class DeadLetterTable {

  private static final String COLUMNS =
      "d.id, d.event_id, d.aggregate_type, d.aggregate_id, d.event_type, d.destination,"
          + " d.reason, d.attempts, d.created_at, d.dead_lettered_at, d.last_error, d.pipeline";

  private final OutboxTables tables;

  private DeadLetterTable(OutboxTables tables) {
    this.tables = tables;
  }

  /** The dead-letter table of {@code tables}, replaying into its outbox table. */
  public static DeadLetterTable of(OutboxTables tables) {
    return new DeadLetterTable(Objects.requireNonNull(tables, "tables"));
  }

  /** The tables worked on. */
  public OutboxTables tables() {
    return tables;
  }

  /** What a replay did, or would do. */
  public record ReplayCount(int replayed, int skipped) {}

  /**
   * The dead letters that match, oldest dead-lettered first.
   *
   * @param limit the most rows to return; 0 for all
   */
  public List<DeadLetter> list(Connection c, DeadLetterFilter filter, int limit)
      throws SQLException {
    Where where = Where.of(filter);
    String sql =
        "SELECT "
            + COLUMNS
            + " FROM "
            + tables.qualifiedDeadLetterTable()
            + " d"
            + where.sql
            + " ORDER BY d.dead_lettered_at, d.id"
            + (limit > 0 ? " LIMIT " + limit : "");
    return inTransaction(
        c,
        () -> {
          List<DeadLetter> rows = new ArrayList<>();
          try (PreparedStatement s = c.prepareStatement(sql)) {
            where.bind(c, s, 1);
            try (ResultSet rs = s.executeQuery()) {
              while (rs.next()) {
                rows.add(row(rs));
              }
            }
          }
          return rows;
        });
  }

  /** How many dead letters match. */
  public int count(Connection c, DeadLetterFilter filter) throws SQLException {
    Where where = Where.of(filter);
    String sql = "SELECT count(*) FROM " + tables.qualifiedDeadLetterTable() + " d" + where.sql;
    return inTransaction(c, () -> single(c, sql, where)[0]);
  }

  /**
   * Moves the matching dead letters back into the outbox (see the class comment), in one
   * transaction; with {@code dryRun} only counts what it would do and changes nothing.
   */
  public ReplayCount replay(Connection c, DeadLetterFilter filter, boolean dryRun)
      throws SQLException {
    Where where = Where.of(filter);
    String outbox = tables.qualifiedTable();
    String dead = tables.qualifiedDeadLetterTable();
    OutboxColumns oc = tables.columns();
    String sql;
    if (dryRun) {
      sql =
          "SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM "
              + outbox
              + " o WHERE "
              + oc.eventId("o")
              + " = d.event_id)),"
              + " count(*) FILTER (WHERE EXISTS (SELECT 1 FROM "
              + outbox
              + " o WHERE "
              + oc.eventId("o")
              + " = d.event_id))"
              + " FROM "
              + dead
              + " d"
              + where.sql;
    } else {
      // FOR UPDATE: a concurrent replay or purge of the same rows waits, then sees them gone.
      // ORDER BY d.id in the INSERT: new ids follow the original order of each key's events.
      sql =
          "WITH picked AS (SELECT d.id, d.event_id, d.aggregate_type, d.aggregate_id,"
              + " d.event_type, d.destination, d.payload, d.headers, d.created_at FROM "
              + dead
              + " d"
              + where.sql
              + " FOR UPDATE),\n"
              + "inserted AS (INSERT INTO "
              + outbox
              + " ("
              + String.join(
                  ", ",
                  OutboxTables.quote(oc.eventId()),
                  OutboxTables.quote(oc.aggregateType()),
                  OutboxTables.quote(oc.aggregateId()),
                  OutboxTables.quote(oc.eventType()),
                  "destination",
                  OutboxTables.quote(oc.payload()))
              + ", headers, created_at)\n"
              + " SELECT event_id, aggregate_type, aggregate_id, event_type, destination, payload,"
              + " headers, created_at FROM picked p"
              // Not ON CONFLICT: a partitioned outbox has no unique index on event_id of its own.
              + " WHERE NOT EXISTS (SELECT 1 FROM "
              + outbox
              + " o WHERE o."
              + OutboxTables.quote(oc.eventId())
              + " = p.event_id) ORDER BY id\n"
              + " RETURNING "
              + OutboxTables.quote(oc.eventId())
              + " AS event_id),\n"
              + "removed AS (DELETE FROM "
              + dead
              + " d USING picked p, inserted i"
              + " WHERE d.id = p.id AND p.event_id = i.event_id RETURNING d.id)\n"
              + "SELECT (SELECT count(*) FROM inserted),"
              + " (SELECT count(*) FROM picked) - (SELECT count(*) FROM removed)";
    }
    return inTransaction(
        c,
        () -> {
          int[] counts = single(c, sql, where);
          return new ReplayCount(counts[0], counts[1]);
        });
  }

  /**
   * Deletes the matching dead letters in one transaction and returns how many; with {@code dryRun}
   * only counts them.
   */
  public int purge(Connection c, DeadLetterFilter filter, boolean dryRun) throws SQLException {
    if (dryRun) {
      return count(c, filter);
    }
    Where where = Where.of(filter);
    String sql = "DELETE FROM " + tables.qualifiedDeadLetterTable() + " d" + where.sql;
    return inTransaction(
        c,
        () -> {
          try (PreparedStatement s = c.prepareStatement(sql)) {
            where.bind(c, s, 1);
            return s.executeUpdate();
          }
        });
  }

  /** The database's clock, which relative times ({@code --since 2h}) count back from. */
  public static Instant databaseNow(Connection c) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("SELECT now()");
        ResultSet rs = s.executeQuery()) {
      rs.next();
      return rs.getObject(1, OffsetDateTime.class).toInstant();
    }
  }

  private static int[] single(Connection c, String sql, Where where) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(sql)) {
      where.bind(c, s, 1);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        int columns = rs.getMetaData().getColumnCount();
        int[] values = new int[columns];
        for (int i = 0; i < columns; i++) {
          values[i] = rs.getInt(i + 1);
        }
        return values;
      }
    }
  }

  private static DeadLetter row(ResultSet rs) throws SQLException {
    return new DeadLetter(
        rs.getLong(1),
        rs.getObject(2, UUID.class),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        rs.getString(6),
        rs.getString(7),
        rs.getInt(8),
        instant(rs.getObject(9, OffsetDateTime.class)),
        instant(rs.getObject(10, OffsetDateTime.class)),
        rs.getString(11),
        rs.getString(12));
  }

  private static Instant instant(OffsetDateTime t) {
    return t == null ? null : t.toInstant();
  }

  private interface Work<T> {
    T run() throws SQLException;
  }

  /** Runs {@code work} as one transaction, restoring the connection's auto-commit mode. */
  private static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(false);
    try {
      T result = work.run();
      c.commit();
      return result;
    } catch (SQLException | RuntimeException e) {
      try {
        c.rollback();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    } finally {
      c.setAutoCommit(autoCommit);
    }
  }

  /** The WHERE clause of a filter: fixed SQL text per criterion, every value a bind parameter. */
  private record Where(String sql, DeadLetterFilter filter) {

    static Where of(DeadLetterFilter filter) {
      StringBuilder sql = new StringBuilder(" WHERE d.pipeline = ?");
      if (!filter.eventIds().isEmpty()) {
        sql.append(" AND d.event_id = ANY(?)");
      }
      if (filter.reason() != null) {
        sql.append(" AND d.reason = ?");
      }
      if (!filter.eventTypes().isEmpty()) {
        sql.append(" AND d.event_type = ANY(?)");
      }
      if (filter.since() != null) {
        sql.append(" AND d.dead_lettered_at >= ?");
      }
      if (filter.until() != null) {
        sql.append(" AND d.dead_lettered_at < ?");
      }
      return new Where(sql.toString(), filter);
    }

    /** Binds the values in the order of {@link #of}; returns the next parameter index. */
    int bind(Connection c, PreparedStatement s, int first) throws SQLException {
      int i = first;
      s.setString(i++, filter.pipeline());
      if (!filter.eventIds().isEmpty()) {
        s.setArray(i++, c.createArrayOf("uuid", filter.eventIds().toArray()));
      }
      if (filter.reason() != null) {
        s.setString(i++, filter.reason());
      }
      if (!filter.eventTypes().isEmpty()) {
        s.setArray(i++, c.createArrayOf("text", filter.eventTypes().toArray()));
      }
      if (filter.since() != null) {
        s.setObject(i++, OffsetDateTime.ofInstant(filter.since(), ZoneOffset.UTC));
      }
      if (filter.until() != null) {
        s.setObject(i++, OffsetDateTime.ofInstant(filter.until(), ZoneOffset.UTC));
      }
      return i;
    }
  }
}
