package io.outbox.connect;

import io.outbox.relay.spi.OutboxEvent;
import java.util.Map;
import java.util.TreeMap;
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

  private OutboxRecords() {}

  static SourceRecord toRecord(String pipeline, int lane, String topic, OutboxEvent event) {
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
        Map.of(PIPELINE, pipeline, LANE, lane),
        Map.of(ID, event.id(), ATTEMPTS, event.attempts()),
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
