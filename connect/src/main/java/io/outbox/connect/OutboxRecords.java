package io.outbox.connect;

import io.outbox.relay.spi.OutboxEvent;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.ConnectHeaders;
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

  private OutboxRecords() {}

  /** The source partition of a lane: the key its offsets are stored under. */
  static Map<String, Object> partition(String pipeline, int lane) {
    return Map.of(PIPELINE, pipeline, LANE, lane);
  }

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
    ConnectHeaders headers = new ConnectHeaders();
    headers.addString("event-id", event.eventId().toString());
    headers.addString("event-type", event.eventType());
    headers.addString("aggregate-type", event.aggregateType());
    headers.addString("aggregate-id", event.aggregateId());
    headers.addString("created-at", event.createdAt().toString());
    for (Map.Entry<String, String> h : new TreeMap<>(event.headers()).entrySet()) {
      if (headers.lastWithName(h.getKey()) == null) {
        headers.addString(h.getKey(), h.getValue());
      }
    }
    return new SourceRecord(
        partition(pipeline, lane),
        Map.of(ID, event.id(), ATTEMPTS, event.attempts(), BATCH, batch),
        topic,
        null,
        Schema.STRING_SCHEMA,
        event.aggregateId(),
        Schema.BYTES_SCHEMA,
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
