package io.outbox.source.postgres;

import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The retention deletes of one pipeline's tables: one small batch of old published rows or old dead
 * letters per call, each its own short statement.
 *
 * <p>The statements find their rows through an index in age order ({@code published_at} of
 * published rows, a partial index that pending rows never enter; {@code dead_lettered_at}) and
 * compare ages against the database clock. Pending rows are never touched: the claim's rows have
 * {@code published_at IS NULL}. Published rows another transaction has locked are skipped ({@code
 * SKIP LOCKED}), so a delete never waits. Dead letters are locked by nobody but an operator's
 * {@code dead-letters replay | purge}, so their delete goes without {@code FOR UPDATE}: it needs
 * only {@code SELECT, DELETE} on the dead-letter table, no {@code UPDATE}.
 *
 * <p>A partitioned outbox ({@code layout = partitioned}) loses no row by {@code DELETE}: a
 * partition whose rows are all settled and old enough is emptied at once ({@link
 * #emptySettledPartitions}), which leaves no dead row behind.
 */
public final class Retention {

  /**
   * How long emptying a partition waits for its lock, once the source's own claims are paused,
   * before it tries again next round: other sessions' (another pipeline's claims, a long read).
   */
  static final String PARTITION_LOCK_TIMEOUT = "500ms";

  /** Stops the source's claims from holding the partitions while one is emptied. */
  public interface Pause {

    /** Nothing to pause. */
    Pause NONE =
        new Pause() {
          @Override
          public boolean pause() {
            return true;
          }

          @Override
          public long resume() {
            return 0;
          }
        };

    /**
     * Lets no new claim transaction open and waits for those open to end; {@link #resume} follows
     * whatever it returns.
     *
     * @return whether they ended in time
     */
    boolean pause();

    /** Lets claims open again; returns how long they were paused, in nanoseconds. */
    long resume();
  }

  private static final String PARTITIONS =
      "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), pg_relation_size(c.oid)"
          + " FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
          + " JOIN pg_namespace n ON n.oid = c.relnamespace"
          + " WHERE i.inhparent = to_regclass(?) AND c.relkind = 'r' ORDER BY c.relname";

  /**
   * A partition emptied, with the bytes its rows took and how long the source's claims were paused
   * for it.
   */
  public record Emptied(String partition, long bytes, long pausedNanos) {}

  /**
   * Rows of an earlier round of ids in the partition taking ids now: the ids came round to it
   * before retention could empty it.
   *
   * @param partition the partition, schema-qualified and quoted as needed
   * @param lastId the highest id, which put it there
   * @param rows its rows of the earlier round (ids more than {@code partitions.size} below)
   * @param unpublished how many of them are not settled (published, or passed by the positions)
   */
  public record EarlierRound(String partition, long lastId, long rows, long unpublished) {}

  private final OutboxTables tables;
  private final String deletePublished;
  private final String deleteSettledByPosition;
  private final String deleteDeadLetters;

  private Retention(OutboxTables tables) {
    this.tables = tables;
    String outbox = tables.qualifiedTable();
    String dead = tables.qualifiedDeadLetterTable();
    String id = OutboxTables.quote(tables.columns().id());
    this.deletePublished =
        "DELETE FROM "
            + outbox
            + " WHERE "
            + id
            + " IN (SELECT "
            + id
            + " FROM "
            + outbox
            + " WHERE published_at IS NOT NULL"
            + " AND published_at < now() - ? * interval '1 millisecond'"
            + " ORDER BY published_at LIMIT ? FOR UPDATE SKIP LOCKED)";
    // Settling by position, a row covered by every lane's position (its transaction below the
    // lowest xmin of their settled snapshots) and never written: oldest transactions first, through
    // the index on tx, stopping at the batch's end whatever the rows' age, so that a round reads no
    // further than the first rows still too young (tx order is near enough created_at order).
    this.deleteSettledByPosition =
        "DELETE FROM "
            + outbox
            + " WHERE "
            + id
            + " IN (SELECT x.id FROM (SELECT o."
            + id
            + " AS id, o.created_at FROM "
            + outbox
            + " o WHERE o.tx < ?::xid8 AND o.published_at IS NULL AND o.next_attempt_at IS NULL"
            + " ORDER BY o.tx LIMIT ? FOR UPDATE SKIP LOCKED) x"
            + " WHERE x.created_at < now() - ? * interval '1 millisecond')";
    this.deleteDeadLetters =
        "DELETE FROM "
            + dead
            + " WHERE id IN (SELECT id FROM "
            + dead
            + " WHERE dead_lettered_at < now() - ? * interval '1 millisecond' AND pipeline = ?"
            + " ORDER BY dead_lettered_at LIMIT ?)";
  }

  /** Retention of these tables. */
  public static Retention of(OutboxTables tables) {
    return new Retention(Objects.requireNonNull(tables, "tables"));
  }

  /** The tables worked on. */
  public OutboxTables tables() {
    return tables;
  }

  /** The statement deleting one batch of published rows, for {@code EXPLAIN}. */
  public String deletePublishedSql() {
    return deletePublished;
  }

  /** The statement deleting one batch of dead letters, for {@code EXPLAIN}. */
  public String deleteDeadLettersSql() {
    return deleteDeadLetters;
  }

  /**
   * Deletes at most {@code limit} rows published more than {@code age} ago (by the database clock);
   * returns how many. Runs in the connection's current transaction (one statement in auto-commit).
   */
  /**
   * Deletes at most {@code limit} rows of {@code pipeline} settled by position ({@code on-publish =
   * position}: never written) and created more than {@code age} ago; 0 when the pipeline has no
   * positions.
   */
  public int deleteSettledByPosition(Connection c, String pipeline, Duration age, int limit)
      throws SQLException {
    String xmin = OutboxStatus.settledXmin(c, tables, pipeline);
    if (xmin == null) {
      return 0;
    }
    try (PreparedStatement s = c.prepareStatement(deleteSettledByPosition)) {
      s.setString(1, xmin);
      s.setInt(2, limit);
      s.setLong(3, age.toMillis());
      return s.executeUpdate();
    }
  }

  public int deletePublished(Connection c, Duration age, int limit) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(deletePublished)) {
      s.setLong(1, age.toMillis());
      s.setInt(2, limit);
      return s.executeUpdate();
    }
  }

  /**
   * Empties ({@code TRUNCATE}) every partition of the outbox that holds rows but none that is
   * unsettled or was published less than {@code age} ago (with a zero age: none at all), each in a
   * short transaction of its own on {@code c} (in auto-commit mode, left so). The condition is
   * checked again under the partition's exclusive lock, so a row committed meanwhile (an insert
   * that took its id long ago) keeps the partition. The source's claims are paused meanwhile
   * ({@code pause}): a claim reads every partition and holds them while its events are published,
   * and a lock request waiting behind it would hold up every claim after it. A partition whose
   * claims do not end in time, or whose lock another session keeps past {@value
   * #PARTITION_LOCK_TIMEOUT}, is left for the next round.
   *
   * @param xmin settling by position, the lowest xmin of the pipeline's positions ({@link
   *     OutboxStatus#settledXmin}), below which a row nobody wrote is settled; null without
   *     positions. Read before the round: positions only move on, so what they covered then stays
   *     covered under the partition's lock.
   */
  public List<Emptied> emptySettledPartitions(Connection c, String xmin, Duration age, Pause pause)
      throws SQLException {
    List<Emptied> emptied = new ArrayList<>();
    List<String> names = new ArrayList<>();
    List<Long> sizes = new ArrayList<>();
    try (PreparedStatement s = c.prepareStatement(PARTITIONS)) {
      s.setString(1, tables.qualifiedTable());
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          names.add(r.getString(1));
          sizes.add(r.getLong(2));
        }
      }
    }
    for (int i = 0; i < names.size(); i++) {
      String partition = names.get(i);
      if (sizes.get(i) == 0 || keeps(c, partition, age, xmin)) {
        continue;
      }
      boolean done = false;
      try {
        done = pause.pause() && empty(c, partition, age, xmin);
      } finally {
        long paused = pause.resume();
        if (done) {
          emptied.add(new Emptied(partition, sizes.get(i), paused));
        }
      }
    }
    return emptied;
  }

  /**
   * The rows of an earlier round of ids in the partition that holds the highest id, or {@code null}
   * when it has none (or the outbox is empty, or the highest id is below the layout's first). With
   * partitions of {@code size} ids taken in turn, a row of the current round is at most {@code size
   * - 1} below the highest id, and a row of an earlier round at least {@code size} below: the ids
   * went round every other partition since. With {@code xmin} (as for {@link
   * #emptySettledPartitions}) a row the positions settled does not count as unpublished.
   */
  public EarlierRound earlierRound(Connection c, String xmin, long size) throws SQLException {
    String id = OutboxTables.quote(tables.columns().id());
    String partition;
    long last;
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT quote_ident(n.nspname) || '.' || quote_ident(p.relname), l.id,"
                // the partition of the ids below the layout's base (a converted table's rows)
                + " pg_get_expr(p.relpartbound, p.oid) = 'FOR VALUES IN (''-1'')'"
                + " FROM (SELECT o.tableoid, o."
                + id
                + " AS id FROM "
                + tables.qualifiedTable()
                + " o ORDER BY o."
                + id
                + " DESC LIMIT 1) l"
                + " JOIN pg_class p ON p.oid = l.tableoid"
                + " JOIN pg_namespace n ON n.oid = p.relnamespace")) {
      try (ResultSet r = s.executeQuery()) {
        if (!r.next() || r.getBoolean(3)) {
          return null;
        }
        partition = r.getString(1);
        last = r.getLong(2);
      }
    }
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT count(*), count(*) FILTER (WHERE published_at IS NULL AND (?::xid8 IS NULL"
                + " OR next_attempt_at IS NOT NULL OR tx IS NULL OR tx >= ?::xid8)) FROM "
                + partition
                + " WHERE "
                + id
                + " <= ?")) {
      s.setString(1, xmin);
      s.setString(2, xmin);
      s.setLong(3, last - size);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        long rows = r.getLong(1);
        return rows == 0 ? null : new EarlierRound(partition, last, rows, r.getLong(2));
      }
    }
  }

  /** Empties the partition under its lock unless it keeps rows now; whether it did. */
  private static boolean empty(Connection c, String partition, Duration age, String xmin)
      throws SQLException {
    c.setAutoCommit(false);
    try (Statement s = c.createStatement()) {
      s.execute("SET LOCAL lock_timeout = '" + PARTITION_LOCK_TIMEOUT + "'");
      s.execute("LOCK TABLE " + partition + " IN ACCESS EXCLUSIVE MODE");
      boolean empty = !keeps(c, partition, age, xmin);
      if (empty) {
        s.execute("TRUNCATE " + partition);
      }
      c.commit();
      return empty;
    } catch (SQLException e) {
      c.rollback();
      if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
        throw e;
      }
      return false;
    } finally {
      c.setAutoCommit(true);
    }
  }

  private static final String LOCK_NOT_AVAILABLE = "55P03";

  /**
   * Whether a row of {@code partition} is unsettled or younger than {@code age}. With {@code xmin}
   * (settling by position: the lowest xmin of the pipeline's positions) a row nobody wrote is
   * settled when its transaction is below it, and old by its {@code created_at}, read on the
   * partition's newest transaction (tx order is near enough created_at order); each test goes
   * through an index (on tx, of the exceptions, on published_at).
   */
  private static boolean keeps(Connection c, String partition, Duration age, String xmin)
      throws SQLException {
    String sql;
    if (age.isZero()) {
      sql = "SELECT EXISTS (SELECT 1 FROM " + partition + ")";
    } else if (xmin == null) {
      sql =
          "SELECT EXISTS (SELECT 1 FROM "
              + partition
              + " WHERE published_at IS NULL) OR EXISTS (SELECT 1 FROM "
              + partition
              + " WHERE published_at >= now() - ? * interval '1 millisecond')";
    } else {
      sql =
          "SELECT EXISTS (SELECT 1 FROM "
              + partition
              + " WHERE published_at IS NULL AND next_attempt_at IS NOT NULL)"
              + " OR EXISTS (SELECT 1 FROM "
              + partition
              + " WHERE tx >= ?::xid8 AND published_at IS NULL)"
              + " OR EXISTS (SELECT 1 FROM "
              + partition
              + " WHERE tx IS NULL AND published_at IS NULL)"
              + " OR EXISTS (SELECT 1 FROM "
              + partition
              + " WHERE published_at >= now() - ? * interval '1 millisecond')"
              + " OR EXISTS (SELECT 1 FROM (SELECT created_at FROM "
              + partition
              + " WHERE tx IS NOT NULL ORDER BY tx DESC LIMIT 1) y"
              + " WHERE y.created_at >= now() - ? * interval '1 millisecond')";
    }
    try (PreparedStatement s = c.prepareStatement(sql)) {
      if (!age.isZero()) {
        int i = 1;
        if (xmin != null) {
          s.setString(i++, xmin);
          s.setLong(i++, age.toMillis());
        }
        s.setLong(i, age.toMillis());
      }
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getBoolean(1);
      }
    }
  }

  /**
   * Deletes at most {@code limit} dead letters of {@code pipeline} dead-lettered more than {@code
   * age} ago (by the database clock); returns how many.
   */
  public int deleteDeadLetters(Connection c, String pipeline, Duration age, int limit)
      throws SQLException {
    try (PreparedStatement s = c.prepareStatement(deleteDeadLetters)) {
      s.setLong(1, age.toMillis());
      s.setString(2, pipeline);
      s.setInt(3, limit);
      return s.executeUpdate();
    }
  }
}
