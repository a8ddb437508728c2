package io.outbox.source.cdc.stream;

import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.OutboxEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the parked events of a released key back from the outbox table ({@link ParkedKey}): its
 * pending rows with an id in the parked range, in id order, one batch at a time, through the
 * pending index ({@code id WHERE published_at IS NULL}). Rows settled meanwhile (published,
 * dead-lettered, deleted) are not read; a row the stream holds in memory is skipped by the stream.
 */
public final class ParkedRows {

  /**
   * A batch to read: the key's pending rows in {@code [firstId, lastId]}, at most {@code limit};
   * {@code checkCommits}: first check that no streamed event's transaction is still in progress
   * ({@link ParkedKey#committingAt}).
   */
  public record Request(
      ParkedKey parked, long firstId, long lastId, int limit, boolean checkCommits) {}

  /** A row read back, with its {@code available_at} (a delayed event waits for it). */
  public record Row(OutboxEvent event, Instant availableAt) {}

  private final OutboxTables tables;
  private final OutboxRows rows;

  public ParkedRows(OutboxTables tables) {
    this.tables = tables;
    this.rows = new OutboxRows(tables);
  }

  /** One batch of {@code request}, in id order. */
  public List<Row> read(Connection c, Request request) throws SQLException {
    OutboxColumns oc = tables.columns();
    String sql =
        "SELECT "
            + rows.columns(c)
            + ", o.available_at FROM "
            + tables.qualifiedTable()
            + " o WHERE o.published_at IS NULL AND "
            + oc.id("o")
            + " >= ? AND "
            + oc.id("o")
            + " <= ? AND "
            + oc.aggregateType("o")
            + " = ? AND "
            + oc.aggregateId("o")
            + " = ? ORDER BY "
            + oc.id("o")
            + " LIMIT ?";
    List<Row> read = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, request.firstId());
      ps.setLong(2, request.lastId());
      ps.setString(3, request.parked().key().aggregateType());
      ps.setString(4, request.parked().key().aggregateId());
      ps.setInt(5, request.limit());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          OffsetDateTime available = rs.getObject(11, OffsetDateTime.class);
          read.add(new Row(rows.event(rs), available == null ? null : available.toInstant()));
        }
      }
    }
    return read;
  }
}
