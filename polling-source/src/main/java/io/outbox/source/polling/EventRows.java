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
import com.fasterxml.jackson.core.JsonToken;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import java.io.IOException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Turns the rows of a claim ({@link OutboxSql#claim}) into events. */
final class EventRows {

  private static final byte[] NO_BYTES = new byte[0];
  private static final JsonFactory JSON = new JsonFactory();

  private EventRows() {}

  static List<OutboxEvent> read(ResultSet rs, PayloadFormat format) throws SQLException {
    List<OutboxEvent> events = new ArrayList<>();
    while (rs.next()) {
      events.add(
          new OutboxEvent(
              rs.getLong(ID),
              rs.getObject(EVENT_ID, UUID.class),
              rs.getString(AGGREGATE_TYPE),
              rs.getString(AGGREGATE_ID),
              rs.getString(EVENT_TYPE),
              rs.getString(DESTINATION),
              payload(rs),
              format,
              headers(rs.getString(HEADERS)),
              rs.getObject(CREATED_AT, OffsetDateTime.class).toInstant(),
              rs.getInt(ATTEMPTS)));
    }
    return events;
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
   * The header map of a JSON object as jsonb prints it: string values unquoted, other values as
   * their JSON text (as {@code jsonb_each_text} gives them), {@code null} values left out.
   *
   * @param json the object's text, or {@code null} when the column holds no object
   * @throws SQLException when the text is not JSON (the database printed it, so it cannot be)
   */
  static Map<String, String> headers(String json) throws SQLException {
    if (json == null || json.equals("{}")) {
      return Map.of();
    }
    try (JsonParser p = JSON.createParser(json)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return Map.of();
      }
      Map<String, String> headers = new HashMap<>();
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
      return headers;
    } catch (IOException e) {
      throw new SQLException("unreadable headers column: " + e.getMessage(), e);
    }
  }
}
