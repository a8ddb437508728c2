package io.outbox.source.cdc;

import io.outbox.schema.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads what the outbox holds now for the events a CDC claim took from memory, in one statement (a
 * primary-key probe per event) fenced like a settlement: a stream restarted from its stored
 * position delivers again events published since, and the sweep may hand over a row the stream
 * delivers too; the row, not the INSERT, says whether an event is still to be sent and with how
 * many attempts.
 */
final class CurrentRows {

  private final String sql;

  /**
   * @param fenceSql the leader lock's {@link CdcLeaderLock#fenceSql() fence expression}
   */
  CurrentRows(OutboxTables tables, String fenceSql) {
    // One row with NULLs when no id is pending; ok false (nothing read) when fenced out.
    this.sql =
        "SELECT f.ok, o.id, o.attempts, o.next_attempt_at, o.next_attempt_at > now()"
            + " FROM (SELECT "
            + fenceSql
            + " AS ok) f LEFT JOIN "
            + tables.qualifiedTable()
            + " o ON f.ok AND o.id = ANY(?) AND o.published_at IS NULL";
  }

  /**
   * On {@code c}: in autocommit mode the statement takes the fence lock and releases it; in a
   * transaction, the lock is held until it ends.
   *
   * @param fenced the parameters of the fence: nothing is read unless this epoch is current
   * @return the unpublished rows among {@code items}, by id; an id missing was published,
   *     dead-lettered or deleted
   * @throws SQLException when the database fails, or another instance took over
   */
  Map<Long, ChangeStream.Row> read(
      Connection c, CdcLeaderLock.Fenced fenced, List<ChangeStream.Item> items)
      throws SQLException {
    Long[] ids = new Long[items.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = items.get(i).event().id();
    }
    Map<Long, ChangeStream.Row> pending = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      int next = fenced.bind(ps, 1);
      ps.setArray(next, c.createArrayOf("bigint", ids));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          fenced.require(rs.getBoolean(1), "nothing claimed");
          long id = rs.getLong(2);
          if (rs.wasNull()) {
            continue;
          }
          OffsetDateTime retryAt = rs.getBoolean(5) ? rs.getObject(4, OffsetDateTime.class) : null;
          pending.put(
              id, new ChangeStream.Row(rs.getInt(3), retryAt == null ? null : retryAt.toInstant()));
        }
      }
    }
    return pending;
  }
}
