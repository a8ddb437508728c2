package io.outbox.source.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Reads Debezium change records of the outbox table: an INSERT becomes an {@link OutboxEvent} with
 * the same bytes and headers the polling source would read; the relay's own heartbeat messages tell
 * how far the stream has come; everything else (the relay's UPDATEs and DELETEs, other messages,
 * Debezium's heartbeats) is not an event.
 */
final class ChangeEvents {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String JSON_SCHEMA = "io.debezium.data.Json";

  /** What a record is to the source. */
  sealed interface Change {}

  /** An INSERT into the outbox. */
  record Insert(OutboxEvent event, Instant availableAt) implements Change {}

  /** One of this pipeline's heartbeat messages, emitted at {@code emittedAt} (database clock). */
  record Heartbeat(Instant emittedAt) implements Change {}

  /** Anything else: moves the stream position, carries no event. */
  enum Other implements Change {
    INSTANCE
  }

  private final String heartbeatPrefix;

  /**
   * @param heartbeatPrefix the prefix of this pipeline's logical decoding heartbeat messages
   */
  ChangeEvents(String heartbeatPrefix) {
    this.heartbeatPrefix = heartbeatPrefix;
  }

  /** The heartbeat statement Debezium runs: a non-transactional message with the clock in ms. */
  static String heartbeatQuery(String prefix) {
    return "SELECT pg_logical_emit_message(false, '"
        + prefix
        + "', (extract(epoch FROM clock_timestamp()) * 1000)::bigint::text)";
  }

  Change read(SourceRecord record) {
    if (!(record.value() instanceof Struct value) || value.schema().field("op") == null) {
      return Other.INSTANCE;
    }
    String op = value.getString("op");
    if ("c".equals(op) || "r".equals(op)) {
      Struct after = value.getStruct("after");
      return after == null ? Other.INSTANCE : insert(after);
    }
    if ("m".equals(op) && value.schema().field("message") != null) {
      Struct message = value.getStruct("message");
      if (message != null && heartbeatPrefix.equals(message.getString("prefix"))) {
        Object content = message.get("content");
        byte[] bytes = bytes(content);
        if (bytes != null) {
          try {
            long millis = Long.parseLong(new String(bytes, StandardCharsets.UTF_8).trim());
            return new Heartbeat(Instant.ofEpochMilli(millis));
          } catch (NumberFormatException e) {
            return Other.INSTANCE;
          }
        }
      }
    }
    return Other.INSTANCE;
  }

  private static Insert insert(Struct after) {
    Field payloadField = after.schema().field("payload");
    PayloadFormat format = formatOf(payloadField.schema());
    OutboxEvent event =
        new OutboxEvent(
            after.getInt64("id"),
            UUID.fromString(after.getString("event_id")),
            after.getString("aggregate_type"),
            after.getString("aggregate_id"),
            after.getString("event_type"),
            after.getString("destination"),
            payload(after.get(payloadField)),
            format,
            headers(after.get("headers")),
            instant(after.get("created_at")),
            after.getInt32("attempts"));
    Object available = after.get("available_at");
    return new Insert(event, available == null ? null : instant(available));
  }

  static PayloadFormat formatOf(Schema schema) {
    if (schema.type() == Schema.Type.BYTES) {
      return PayloadFormat.BINARY;
    }
    return JSON_SCHEMA.equals(schema.name()) ? PayloadFormat.JSON : PayloadFormat.TEXT;
  }

  private static byte[] payload(Object value) {
    if (value == null) {
      return new byte[0];
    }
    byte[] bytes = bytes(value);
    return bytes != null ? bytes : value.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] bytes(Object value) {
    if (value instanceof byte[] b) {
      return b;
    }
    if (value instanceof ByteBuffer buffer) {
      ByteBuffer copy = buffer.duplicate();
      byte[] b = new byte[copy.remaining()];
      copy.get(b);
      return b;
    }
    if (value instanceof String s) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
    return null;
  }

  /**
   * Headers as the polling source reads them: a JSON object's members, string values as they are,
   * other values as their JSON text, nulls skipped; anything but an object reads as no headers.
   */
  static Map<String, String> headers(Object value) {
    if (!(value instanceof String text)) {
      return Map.of();
    }
    JsonNode node;
    try {
      node = JSON.readTree(text);
    } catch (IOException e) {
      return Map.of();
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

  /** Debezium's ZonedTimestamp (ISO-8601 text) or epoch microseconds. */
  static Instant instant(Object value) {
    if (value instanceof String s) {
      return OffsetDateTime.parse(s).toInstant();
    }
    if (value instanceof Long micros) {
      return Instant.EPOCH.plusNanos(micros * 1000);
    }
    throw new IllegalArgumentException("not a timestamp: " + value);
  }
}
