package io.outbox.source.cdc.claim;

import io.outbox.client.OutboxTables;
import io.outbox.source.cdc.engine.ChangeEvents;
import io.outbox.source.cdc.lease.CdcLeaderLock;
import io.outbox.source.cdc.stream.ChangeStream;
import io.outbox.source.cdc.stream.OutboxRows;
import io.outbox.source.cdc.stream.TransactionSnapshot;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads what the outbox holds now for the events a CDC claim took from memory, in one statement (a
 * primary-key probe per event) fenced like a settlement: the stream carries only an event's id and
 * key ({@link ChangeEvents#streamed}), so the row is what is published; a stream restarted from its
 * stored position delivers again events published since, and the sweep may hand over a row the
 * stream delivers too; the row, not the INSERT, says whether an event is still to be sent and with
 * how many attempts. A row that is not there at all is told apart from a published one: PostgreSQL
 * may stream a transaction a moment before other sessions see it committed ({@link UnseenRows}).
 */
final class CurrentRows {

  // After the event's ten columns (OutboxRows#columns).
  private static final int RETRY_AT = 11;
  private static final int RETRY_LATER = 12;
  private static final int UNPUBLISHED = 13;
  private static final int OK = 14;

  private final OutboxTables tables;
  private final String fenceSql;
  private final OutboxRows rows;
  private final String deadLettered;
  private String sql; // once the payload's type is known

  /**
   * @param fenceSql the leader lock's {@link CdcLeaderLock#fenceSql() fence expression}
   */
  CurrentRows(OutboxTables tables, String fenceSql) {
    this.tables = tables;
    this.fenceSql = fenceSql;
    this.rows = new OutboxRows(tables);
    this.deadLettered =
        "SELECT id FROM " + tables.qualifiedDeadLetterTable() + " WHERE id = ANY(?)";
  }

  /**
   * What the outbox holds for the events taken.
   *
   * @param pending the unpublished rows, by id
   * @param absent the ids of no row at all, in the outbox or the dead-letter table: deleted
   *     (published with {@code on-publish = delete}), or not visible yet; an id in neither is
   *     published or dead-lettered
   * @param committing of the absent ids, those whose transaction is still in progress to other
   *     sessions: streamed, so its commit is flushed, but not visible yet (the session waits for a
   *     synchronous standby, or is a moment from done)
   */
  record Read(Map<Long, ChangeStream.Row> pending, Set<Long> absent, Set<Long> committing) {}

  /**
   * On {@code c}: in autocommit mode the statement takes the fence lock and releases it; in a
   * transaction, the lock is held until it ends.
   *
   * @param fenced the parameters of the fence: nothing is read unless this epoch is current
   * @throws SQLException when the database fails, or another instance took over
   */
  Read read(Connection c, CdcLeaderLock.Fenced fenced, List<ChangeStream.Item> items)
      throws SQLException {
    Long[] ids = new Long[items.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = items.get(i).event().id();
    }
    Map<Long, ChangeStream.Row> pending = new HashMap<>();
    Set<Long> absent = new HashSet<>(Arrays.asList(ids));
    try (PreparedStatement ps = c.prepareStatement(sql(c))) {
      int next = fenced.bind(ps, 1);
      ps.setArray(next, c.createArrayOf("bigint", ids));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          fenced.require(rs.getBoolean(OK), "nothing claimed");
          long id = rs.getLong(1);
          if (rs.wasNull()) {
            continue;
          }
          absent.remove(id);
          if (!rs.getBoolean(UNPUBLISHED)) {
            continue; // published
          }
          OffsetDateTime retryAt =
              rs.getBoolean(RETRY_LATER) ? rs.getObject(RETRY_AT, OffsetDateTime.class) : null;
          pending.put(
              id,
              new ChangeStream.Row(rows.event(rs), retryAt == null ? null : retryAt.toInstant()));
        }
      }
    }
    if (!absent.isEmpty()) {
      // Dead-lettered: final. (A second statement only when some row is not in the outbox.)
      try (PreparedStatement ps = c.prepareStatement(deadLettered)) {
        ps.setArray(1, c.createArrayOf("bigint", absent.toArray()));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            absent.remove(rs.getLong(1));
          }
        }
      }
    }
    return new Read(pending, absent, committing(c, items, absent));
  }

  /** Of the {@code absent} events, those whose streamed transaction is still in progress. */
  private static Set<Long> committing(Connection c, List<ChangeStream.Item> items, Set<Long> absent)
      throws SQLException {
    if (absent.isEmpty()) {
      return Set.of();
    }
    TransactionSnapshot snapshot = TransactionSnapshot.current(c);
    Set<Long> committing = new HashSet<>();
    for (ChangeStream.Item item : items) {
      long id = item.event().id();
      if (item.txId() != 0 && absent.contains(id) && snapshot.inProgress(item.txId())) {
        committing.add(id);
      }
    }
    return committing;
  }

  private String sql(Connection c) throws SQLException {
    if (sql == null) {
      // One row with NULLs but ok when no id is there; ok false (nothing read) when fenced out.
      sql =
          "SELECT "
              + rows.columns(c)
              + ", o.next_attempt_at, o.next_attempt_at > now(), o.published_at IS NULL, f.ok"
              + " FROM (SELECT "
              + fenceSql
              + " AS ok) f LEFT JOIN "
              + tables.qualifiedTable()
              + " o ON f.ok AND "
              + tables.columns().id("o")
              + " = ANY(?)";
    }
    return sql;
  }
}
