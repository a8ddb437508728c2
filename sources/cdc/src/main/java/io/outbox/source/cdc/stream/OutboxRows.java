package io.outbox.source.cdc.stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.source.postgres.EventColumns;
import io.outbox.source.postgres.OutboxTableCheck;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads outbox rows from the table as events, with their bytes and headers (read as the polling
 * source reads them): for the catch-up, the reconcile sweep, a claim's rows and the read-back of
 * parked rows. The payload column's type is looked up once.
 */
public final class OutboxRows {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final OutboxTables tables;
  private PayloadFormat format; // found on first use

  public OutboxRows(OutboxTables tables) {
    this.tables = tables;
  }

  /**
   * The select list of {@link #event} (10 columns) for the outbox aliased {@code o}; columns a
   * caller adds come after it.
   */
  public String columns(Connection c) throws SQLException {
    if (format == null) {
      format = payloadFormat(c);
    }
    OutboxColumns oc = tables.columns();
    String payload = format == PayloadFormat.BINARY ? oc.payload("o") : oc.payload("o") + "::text";
    return String.join(
            ", ",
            oc.id("o"),
            oc.eventId("o"),
            oc.aggregateType("o"),
            oc.aggregateId("o"),
            oc.eventType("o"),
            "o.destination",
            payload)
        + ", o.headers::text, o.created_at, o.attempts";
  }

  /** The event of the current row of a result selecting {@link #columns} first. */
  public OutboxEvent event(ResultSet rs) throws SQLException {
    return EventColumns.read(rs, format, OutboxRows::headers);
  }

  /**
   * Headers as the polling source reads them: a JSON object's members, string values as they are,
   * other values as their JSON text, nulls skipped; NULL and JSON that is not an object read as no
   * headers.
   *
   * @throws IllegalArgumentException when the text is not JSON (a text column), without quoting it
   */
  private static Map<String, String> headers(Object value) {
    if (!(value instanceof String text)) {
      return Map.of();
    }
    JsonNode node;
    try {
      node = JSON.readTree(text);
    } catch (IOException e) {
      throw new IllegalArgumentException("headers are not a JSON object: not valid JSON");
    }
    if (node == null || !node.isObject()) {
      return Map.of();
    }
    Map<String, String> headers = new HashMap<>();
    for (Map.Entry<String, JsonNode> f : node.properties()) {
      JsonNode v = f.getValue();
      if (v.isNull()) {
        continue;
      }
      headers.put(f.getKey(), v.isTextual() ? v.textValue() : v.toString());
    }
    return headers;
  }

  private PayloadFormat payloadFormat(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                + " WHERE attrelid = to_regclass(?) AND attname = ? AND NOT attisdropped")) {
      ps.setString(1, tables.qualifiedTable());
      ps.setString(2, tables.columns().payload());
      try (ResultSet rs = ps.executeQuery()) {
        PayloadFormat format = rs.next() ? OutboxTableCheck.formatOf(rs.getString(1)) : null;
        return format == null ? PayloadFormat.JSON : format;
      }
    }
  }
}
