package io.outbox.source.cdc;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.source.postgres.EventColumns;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Reads outbox rows from the table as events, with the bytes and headers the stream would carry:
 * for the reconcile sweep and the catch-up of a new slot. The payload column's type is looked up
 * once.
 */
final class OutboxRows {

  private final OutboxTables tables;
  private PayloadFormat format; // found on first use

  OutboxRows(OutboxTables tables) {
    this.tables = tables;
  }

  /**
   * The select list of {@link #event} (10 columns) for the outbox aliased {@code o}; columns a
   * caller adds come after it.
   */
  String columns(Connection c) throws SQLException {
    if (format == null) {
      format = payloadFormat(c);
    }
    String payload = format == PayloadFormat.BINARY ? "o.payload" : "o.payload::text";
    return "o.id, o.event_id, o.aggregate_type, o.aggregate_id, o.event_type, o.destination, "
        + payload
        + ", o.headers::text, o.created_at, o.attempts";
  }

  /** The event of the current row of a result selecting {@link #columns} first. */
  OutboxEvent event(ResultSet rs) throws SQLException {
    return EventColumns.read(rs, format, ChangeEvents::headers);
  }

  private PayloadFormat payloadFormat(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                + " WHERE attrelid = to_regclass(?) AND attname = 'payload' AND NOT attisdropped")) {
      ps.setString(1, tables.qualifiedTable());
      try (ResultSet rs = ps.executeQuery()) {
        String type = rs.next() ? rs.getString(1) : "jsonb";
        return switch (type) {
          case "bytea" -> PayloadFormat.BINARY;
          case "text" -> PayloadFormat.TEXT;
          default -> PayloadFormat.JSON;
        };
      }
    }
  }
}
