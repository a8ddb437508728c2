package io.outbox.source.polling;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.source.postgres.EventColumns;
import java.io.IOException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Turns the rows of a claim ({@link OutboxSql#claim}) into events ({@link EventColumns}). */
final class EventRows {

  private static final JsonFactory JSON = new JsonFactory();

  private EventRows() {}

  static List<OutboxEvent> read(ResultSet rs, PayloadFormat format) throws SQLException {
    List<OutboxEvent> events = new ArrayList<>();
    while (rs.next()) {
      events.add(EventColumns.read(rs, format, EventRows::headers));
    }
    return events;
  }

  /**
   * The header map of a JSON object: string values unquoted, other values as their JSON text (as
   * {@code jsonb_each_text} gives them for a jsonb column), {@code null} values left out. SQL NULL
   * and JSON that is not an object (an array, a string, {@code null}) read as no headers, as the
   * CDC source reads them.
   *
   * @param json the column's text, or {@code null}
   * @throws IllegalArgumentException naming the column when the text is not JSON (a text column:
   *     jsonb and json columns always hold JSON); the message names the position, never the text
   */
  static Map<String, String> headers(String json) {
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
        throw new IllegalArgumentException(
            "headers are not a JSON object: text after the JSON value");
      }
      return first == JsonToken.START_OBJECT ? headers : Map.of();
    } catch (IOException e) {
      // Not the parser's message: it quotes the text around the fault.
      long at =
          e instanceof JsonProcessingException j && j.getLocation() != null
              ? j.getLocation().getCharOffset()
              : -1;
      throw new IllegalArgumentException(
          "headers are not a JSON object: not valid JSON"
              + (at >= 0 ? " (at character " + at + ")" : ""));
    }
  }
}
