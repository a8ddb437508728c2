package io.outbox.source.cdc.engine;

import io.outbox.client.OutboxColumns;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.source.cdc.stream.ChangeStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Reads Debezium change records of the outbox table: an INSERT becomes a {@link #streamed streamed
 * event}, its row's id and ordering key (the rest of the row is read from the table before a claim
 * hands it out: {@link io.outbox.source.cdc.claim.CurrentRows}); the relay's own heartbeat messages
 * tell how far the stream has come; everything else (the relay's UPDATEs and DELETEs, other
 * messages, Debezium's heartbeats) is not an event.
 */
public final class ChangeEvents {

  private static final UUID UNREAD = new UUID(0, 0);
  private static final byte[] NO_BYTES = new byte[0];

  /**
   * The columns of the outbox the stream carries, under the table's names ({@code columns.*}): what
   * places an event in its lane and its key's order, and when it is due. A publication the relay
   * creates lists only these (PostgreSQL 15+); Debezium's {@code column.include.list} keeps any
   * other out of its records.
   */
  public static List<String> columns(OutboxColumns columns) {
    return List.of(columns.id(), columns.aggregateType(), columns.aggregateId(), "available_at");
  }

  /** What a record is to the source. */
  sealed interface Change {}

  /**
   * An INSERT into the outbox; {@code txId}, its transaction's id as the stream names it (0 when
   * the record has none).
   */
  record Insert(OutboxEvent event, Instant availableAt, long txId) implements Change {}

  /** One of this pipeline's heartbeat messages, emitted at {@code emittedAt} (database clock). */
  record Heartbeat(Instant emittedAt) implements Change {}

  /** Anything else: moves the stream position, carries no event. */
  enum Other implements Change {
    INSTANCE
  }

  private final String heartbeatPrefix;
  private final OutboxColumns columns;

  /**
   * @param heartbeatPrefix the prefix of this pipeline's logical decoding heartbeat messages
   * @param columns the outbox's names for the relay's event columns
   */
  ChangeEvents(String heartbeatPrefix, OutboxColumns columns) {
    this.heartbeatPrefix = heartbeatPrefix;
    this.columns = columns;
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
      return after == null ? Other.INSTANCE : insert(after, txId(value));
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

  private Insert insert(Struct after, long txId) {
    Object available = after.get("available_at");
    return new Insert(
        streamed(
            after.getInt64(columns.id()),
            after.getString(columns.aggregateType()),
            after.getString(columns.aggregateId())),
        available == null ? null : instant(available),
        txId);
  }

  /** The {@code txId} of the record's {@code source} block; 0 when it has none. */
  private static long txId(Struct value) {
    if (value.schema().field("source") == null) {
      return 0;
    }
    Struct source = value.getStruct("source");
    if (source == null || source.schema().field("txId") == null) {
      return 0;
    }
    Object txId = source.get("txId");
    return txId instanceof Number n ? n.longValue() : 0;
  }

  /**
   * A streamed INSERT as the stream holds it until a claim reads its row: the id and the key (a
   * NULL key column as the empty string, as {@code EventColumns} reads it; the row's read names the
   * defect), nothing else of the row. Never published as it is: {@link ChangeStream#checked} puts
   * the row's event in its place.
   */
  public static OutboxEvent streamed(long id, String aggregateType, String aggregateId) {
    return new OutboxEvent(
        id,
        UNREAD,
        aggregateType == null ? "" : aggregateType,
        aggregateId == null ? "" : aggregateId,
        "",
        null,
        NO_BYTES,
        PayloadFormat.BINARY,
        Map.of(),
        Instant.EPOCH,
        0);
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
