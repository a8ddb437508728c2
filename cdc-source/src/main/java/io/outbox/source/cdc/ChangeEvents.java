package io.outbox.source.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.support.EventColumns;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
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
    Object payload = after.get(payloadField);
    Object created = after.get("created_at");
    Object headers = after.get("headers");
    String eventId = after.getString("event_id");
    Integer attempts = after.getInt32("attempts");
    // A row that cannot be published as it is becomes an event with a defect, as polled.
    OutboxEvent event =
        EventColumns.event(
            after.getInt64("id"),
            eventId == null ? null : UUID.fromString(eventId),
            after.getString("aggregate_type"),
            after.getString("aggregate_id"),
            after.getString("event_type"),
            after.getString("destination"),
            payload == null ? null : payload(payload),
            formatOf(payloadField.schema()),
            headers instanceof String text ? text : null,
            ChangeEvents::headers,
            created == null ? null : instant(created),
            attempts == null ? 0 : attempts);
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
   * other values as their JSON text, nulls skipped; NULL and JSON that is not an object read as no
   * headers.
   *
   * @throws IllegalArgumentException when the text is not JSON (a text column), without quoting it
   */
  static Map<String, String> headers(Object value) {
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

  /**
   * Epoch microseconds ({@link EpochMicrosConverter}; its infinities as {@link Instant#MAX} and
   * {@link Instant#MIN}, as the driver reads them) or Debezium's ZonedTimestamp (ISO-8601 text,
   * when the user's own {@code converters} replaced the relay's).
   */
  static Instant instant(Object value) {
    if (value instanceof Long micros) {
      if (micros == EpochMicrosConverter.POSITIVE_INFINITY) {
        return Instant.MAX;
      }
      if (micros == EpochMicrosConverter.NEGATIVE_INFINITY) {
        return Instant.MIN;
      }
      return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
    }
    if (value instanceof String s) {
      return OffsetDateTime.parse(s).toInstant();
    }
    throw new IllegalArgumentException("not a timestamp: " + value);
  }
}
