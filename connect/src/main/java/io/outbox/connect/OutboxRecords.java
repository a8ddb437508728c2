package io.outbox.connect;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.support.RelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * An outbox event as a Connect record, in the daemon's wire format: key = {@code aggregate_id} (a
 * string), value = the payload bytes, headers {@code event-id}, {@code event-type}, {@code
 * aggregate-type}, {@code aggregate-id}, {@code created-at}, then the row's own headers (a name
 * already present keeps its first value). With {@code key.converter = StringConverter}, {@code
 * value.converter = ByteArrayConverter} and {@code header.converter = StringConverter} the bytes on
 * the wire are the daemon's.
 */
final class OutboxRecords {

  static final String PIPELINE = "pipeline";
  static final String LANE = "lane";
  static final String ID = "id";
  static final String ATTEMPTS = "attempts";
  static final String BATCH = "batch";

  /** In the offset of a dead letter's copy ({@code dead-letter.destination}): its reason. */
  static final String DEAD_LETTER = "dead-letter";

  private OutboxRecords() {}

  /**
   * The batch's events as stored in each record's offset, {@code id:attempts,...}: with
   * exactly-once support the worker commits the last one with the batch's transaction, so a
   * successor can tell which claimed rows a predecessor already got into Kafka.
   */
  static String batch(List<OutboxEvent> sent) {
    return sent.stream().map(OutboxRecords::delivery).collect(Collectors.joining(","));
  }

  /** One delivery attempt of an event: its id and the attempts recorded when it was claimed. */
  static String delivery(OutboxEvent e) {
    return e.id() + ":" + e.attempts();
  }

  /** The deliveries in the offset of a lane's last committed batch; empty when there is none. */
  static Set<String> committedBatch(Map<String, Object> offset) {
    Object batch = offset == null ? null : offset.get(BATCH);
    if (!(batch instanceof String s) || s.isEmpty()) {
      return Set.of();
    }
    return Set.of(s.split(","));
  }

  static SourceRecord toRecord(
      String pipeline, int lane, String topic, OutboxEvent event, String batch) {
    return toRecord(
        pipeline,
        lane,
        topic,
        event,
        Map.of(ID, event.id(), ATTEMPTS, event.attempts(), BATCH, batch),
        Map.of());
  }

  /**
   * The copy of a dead letter for {@code dead-letter.destination}, as the daemon publishes it: the
   * event's record with the headers {@code dead-letter-reason}, {@code dead-letter-attempts} and
   * {@code dead-letter-error}. Its offset names the lane's batch like the batch's own records, so
   * the lane's last committed offset keeps its meaning.
   */
  static SourceRecord deadLetterCopy(
      String pipeline, int lane, String topic, Settlement.DeadLetter dl, String batch) {
    OutboxEvent event = dl.event();
    return toRecord(
        pipeline,
        lane,
        topic,
        event,
        Map.of(
            ID,
            event.id(),
            ATTEMPTS,
            event.attempts(),
            BATCH,
            batch,
            DEAD_LETTER,
            dl.reason().columnValue()),
        RelayHeaders.deadLetter(dl));
  }

  /**
   * Kafka's overhead around one record, at most: the record batch's header (61 bytes), the record's
   * own length, offset and timestamp fields (21), and the key's and value's lengths and the header
   * count (5 each).
   */
  private static final int RECORD_OVERHEAD = 61 + 21 + 15;

  /** A header's name and value lengths and its count, at most. */
  private static final int HEADER_OVERHEAD = 10;

  /**
   * The size of {@code record} as the producer counts it, at most, with the key, value and header
   * converters the connector documents (StringConverter, ByteArrayConverter, StringConverter).
   */
  static long sizeInBytes(SourceRecord record) {
    long size = RECORD_OVERHEAD + utf8(record.key()) + bytes(record.value());
    for (Header h : record.headers()) {
      size += HEADER_OVERHEAD + utf8(h.key()) + utf8(h.value());
    }
    return size;
  }

  private static long utf8(Object value) {
    return value == null ? 0 : value.toString().getBytes(StandardCharsets.UTF_8).length;
  }

  private static long bytes(Object value) {
    return value instanceof byte[] b ? b.length : utf8(value);
  }

  /** Whether a record of this connector is a dead letter's copy. */
  static boolean isDeadLetterCopy(SourceRecord record) {
    return record.sourceOffset().containsKey(DEAD_LETTER);
  }

  private static SourceRecord toRecord(
      String pipeline,
      int lane,
      String topic,
      OutboxEvent event,
      Map<String, Object> offset,
      Map<String, String> extraHeaders) {
    ConnectHeaders headers = new ConnectHeaders();
    headers.addString("event-id", event.eventId().toString());
    headers.addString("event-type", event.eventType());
    headers.addString("aggregate-type", event.aggregateType());
    headers.addString("aggregate-id", event.aggregateId());
    headers.addString("created-at", event.createdAt().toString());
    // Then the extra headers and the row's own, each sorted by name, as the daemon's Kafka sink.
    for (Map<String, String> more : List.of(extraHeaders, event.headers())) {
      for (Map.Entry<String, String> h : new TreeMap<>(more).entrySet()) {
        if (headers.lastWithName(h.getKey()) == null) {
          headers.addString(h.getKey(), h.getValue());
        }
      }
    }
    // A dead letter's copy may be of a row with a NULL key or payload (a defect): optional.
    boolean copy = offset.containsKey(DEAD_LETTER);
    return new SourceRecord(
        LaneOffsets.partition(pipeline, lane),
        offset,
        topic,
        null,
        copy ? Schema.OPTIONAL_STRING_SCHEMA : Schema.STRING_SCHEMA,
        event.aggregateId(),
        copy ? Schema.OPTIONAL_BYTES_SCHEMA : Schema.BYTES_SCHEMA,
        event.payload(),
        null,
        headers);
  }

  /** The lane of a record this connector made. */
  static int lane(SourceRecord record) {
    return ((Number) record.sourcePartition().get(LANE)).intValue();
  }

  /** The outbox row id of a record this connector made. */
  static long id(SourceRecord record) {
    return ((Number) record.sourceOffset().get(ID)).longValue();
  }
}
