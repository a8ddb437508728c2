package io.outbox.source.cdc.claim;

import io.outbox.client.OutboxTables;
import io.outbox.source.cdc.lease.CdcLeaderLock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * The settlement of a CDC claim whose events were all published, without a ledger position: the
 * fence and the mark (or delete) in one statement, on a connection in auto-commit, so one round
 * trip where the general path ({@link ClaimWriter}) takes three (the fence, the statement, the
 * commit). The statement takes the fence lock shared before it changes a row (the rows to change
 * are joined with the fence's one row) and holds it until it commits; when the fence fails it
 * changes nothing.
 */
final class FencedPublish {

  private final String sql;

  /**
   * @param fenceSql the leader lock's {@link CdcLeaderLock#fenceSql() fence expression}
   * @param delete delete the published rows ({@code on-publish = delete}) rather than mark them
   */
  FencedPublish(OutboxTables tables, String fenceSql, boolean delete) {
    String id = tables.columns().id("o");
    String change =
        delete
            ? "DELETE FROM "
                + tables.qualifiedTable()
                + " o USING f WHERE f.ok AND "
                + id
                + " = ANY(?)"
            // clock_timestamp(), as OutboxVerdicts: when the broker's acknowledgement was recorded.
            : "UPDATE "
                + tables.qualifiedTable()
                + " o SET published_at = clock_timestamp() FROM f WHERE f.ok AND "
                + id
                + " = ANY(?)";
    // f is read twice, so it is evaluated once: the lock is taken once, and the result tells
    // whether the fence held.
    this.sql =
        "WITH f AS (SELECT "
            + fenceSql
            + " AS ok), w AS ("
            + change
            + " RETURNING "
            + id
            + ") SELECT f.ok, (SELECT count(*) FROM w) FROM f";
  }

  /**
   * Marks (or deletes) the rows of {@code ids} on {@code c}, which must be in auto-commit mode.
   *
   * @return how many rows it changed
   * @throws SQLException when the database fails, or the fence does not hold (nothing changed)
   */
  int write(Connection c, CdcLeaderLock.Fenced fenced, List<Long> ids) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      int next = fenced.bind(ps, 1);
      ps.setArray(next, c.createArrayOf("bigint", ids.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        fenced.require(rs.getBoolean(1), "not written");
        return (int) rs.getLong(2);
      }
    }
  }
}
