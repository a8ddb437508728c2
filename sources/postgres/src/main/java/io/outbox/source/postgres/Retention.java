package io.outbox.source.postgres;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
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
 */
public final class Retention {

  private final OutboxTables tables;
  private final String deletePublished;
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
  public int deletePublished(Connection c, Duration age, int limit) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(deletePublished)) {
      s.setLong(1, age.toMillis());
      s.setInt(2, limit);
      return s.executeUpdate();
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
