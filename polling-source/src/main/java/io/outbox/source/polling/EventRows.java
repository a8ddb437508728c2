package io.outbox.source.polling;

import static io.outbox.source.polling.OutboxSql.AGGREGATE_ID;
import static io.outbox.source.polling.OutboxSql.AGGREGATE_TYPE;
import static io.outbox.source.polling.OutboxSql.ATTEMPTS;
import static io.outbox.source.polling.OutboxSql.CREATED_AT;
import static io.outbox.source.polling.OutboxSql.DESTINATION;
import static io.outbox.source.polling.OutboxSql.EVENT_ID;
import static io.outbox.source.polling.OutboxSql.EVENT_TYPE;
import static io.outbox.source.polling.OutboxSql.HEADERS;
import static io.outbox.source.polling.OutboxSql.ID;
import static io.outbox.source.polling.OutboxSql.PAYLOAD;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import java.io.IOException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Turns the rows of a claim ({@link OutboxSql#claim}) into events. */
final class EventRows {

  private static final byte[] NO_BYTES = new byte[0];
  private static final UUID NIL = new UUID(0, 0);
  private static final JsonFactory JSON = new JsonFactory();

  private EventRows() {}

  static List<OutboxEvent> read(ResultSet rs, PayloadFormat format) throws SQLException {
    List<OutboxEvent> events = new ArrayList<>();
    while (rs.next()) {
      events.add(event(rs, format));
    }
    return events;
  }

  /**
   * One row as an event. A row that cannot be published as it is (a NULL in a column a table made
   * by hand left nullable, headers that are not JSON) becomes an event with a {@link
   * OutboxEvent#defect() defect} and placeholders, which the pipeline dead-letters: one bad row
   * never fails the claim of its lane.
   */
  private static OutboxEvent event(ResultSet rs, PayloadFormat format) throws SQLException {
    List<String> defects = new ArrayList<>(1);
    UUID eventId = rs.getObject(EVENT_ID, UUID.class);
    if (eventId == null) {
      defects.add("event_id is NULL");
      eventId = NIL;
    }
    String aggregateType = notNull(rs.getString(AGGREGATE_TYPE), "aggregate_type", defects);
    String aggregateId = notNull(rs.getString(AGGREGATE_ID), "aggregate_id", defects);
    String eventType = notNull(rs.getString(EVENT_TYPE), "event_type", defects);
    byte[] payload = rs.getBytes(PAYLOAD);
    if (payload == null) {
      defects.add("payload is NULL");
      payload = NO_BYTES;
    }
    Map<String, String> headers;
    try {
      headers = headers(rs.getString(HEADERS));
    } catch (SQLException e) {
      defects.add(e.getMessage());
      headers = Map.of();
    }
    OffsetDateTime createdAt = rs.getObject(CREATED_AT, OffsetDateTime.class);
    if (createdAt == null) {
      defects.add("created_at is NULL");
    }
    return new OutboxEvent(
        rs.getLong(ID),
        eventId,
        aggregateType,
        aggregateId,
        eventType,
        rs.getString(DESTINATION),
        payload,
        format,
        headers,
        createdAt == null ? Instant.EPOCH : createdAt.toInstant(),
        rs.getInt(ATTEMPTS),
        defects.isEmpty() ? null : String.join("; ", defects));
  }

  private static String notNull(String value, String column, List<String> defects) {
    if (value == null) {
      defects.add(column + " is NULL");
      return "";
    }
    return value;
  }

  /**
   * The column's bytes as received: bytea decoded, text (json and jsonb are read as text) in the
   * connection's encoding, which the driver fixes to UTF-8. No decoding to a String and back.
   */
  private static byte[] payload(ResultSet rs) throws SQLException {
    byte[] bytes = rs.getBytes(PAYLOAD);
    return bytes == null ? NO_BYTES : bytes;
  }

  /**
   * The header map of a JSON object: string values unquoted, other values as their JSON text (as
   * {@code jsonb_each_text} gives them for a jsonb column), {@code null} values left out. SQL NULL
   * and JSON that is not an object (an array, a string, {@code null}) read as no headers, as the
   * CDC source reads them.
   *
   * @param json the column's text, or {@code null}
   * @throws SQLException naming the column when the text is not JSON (a text column: jsonb and json
   *     columns always hold JSON); the message names the position, never the text
   */
  static Map<String, String> headers(String json) throws SQLException {
    if (json == null || json.equals("{}")) {
      return Map.of();
    }
    try (JsonParser p = JSON.createParser(json)) {
      JsonToken first = p.nextToken();
      Map<String, String> headers = new HashMap<>();
      if (first == JsonToken.START_OBJECT) {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          JsonToken value = p.nextToken();
          switch (value) {
            case VALUE_NULL -> {}
            case VALUE_STRING -> headers.put(name, p.getText());
            case START_OBJECT, START_ARRAY -> {
              int start = (int) p.currentTokenLocation().getCharOffset();
              p.skipChildren();
              int end = (int) p.currentLocation().getCharOffset();
              headers.put(name, json.substring(start, end));
            }
            default -> headers.put(name, p.getText()); // numbers and booleans as written
          }
        }
      } else {
        p.skipChildren();
      }
      if (p.nextToken() != null) {
        throw new SQLException("headers are not a JSON object: text after the JSON value");
      }
      return first == JsonToken.START_OBJECT ? headers : Map.of();
    } catch (IOException e) {
      // Not the parser's message: it quotes the text around the fault.
      long at =
          e instanceof JsonProcessingException j && j.getLocation() != null
              ? j.getLocation().getCharOffset()
              : -1;
      throw new SQLException(
          "headers are not a JSON object: not valid JSON"
              + (at >= 0 ? " (at character " + at + ")" : ""));
    }
  }
}
