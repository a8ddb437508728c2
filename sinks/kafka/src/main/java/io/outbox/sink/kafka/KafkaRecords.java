package io.outbox.sink.kafka;

import static io.outbox.relay.spi.support.RelayHeaders.AGGREGATE_ID;
import static io.outbox.relay.spi.support.RelayHeaders.AGGREGATE_TYPE;
import static io.outbox.relay.spi.support.RelayHeaders.CREATED_AT;
import static io.outbox.relay.spi.support.RelayHeaders.EVENT_ID;
import static io.outbox.relay.spi.support.RelayHeaders.EVENT_TYPE;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Maps an event to its Kafka record (docs/design.md, "Lanes and per-key order"): topic =
 * destination, key = aggregate id, value = payload, headers = the relay's five ({@code
 * sink.kafka.headers = relay}) or those of Debezium's outbox event router ({@code debezium}: {@code
 * id} and the {@code additional-placement} headers), then the pipeline's extra headers, then the
 * row's own. The first headers win over extra and row headers of the same name, and extra headers
 * over row headers, so that every name appears once.
 */
final class KafkaRecords {

  /** The relay's own headers. */
  static final KafkaRecords RELAY = new KafkaRecords(null);

  /** Debezium's header of the event id (its {@code table.field.event.id} placed as a header). */
  static final String DEBEZIUM_ID = "id";

  private final List<HeaderPlacement> debezium; // null: the relay's headers

  private KafkaRecords(List<HeaderPlacement> debezium) {
    this.debezium = debezium;
  }

  /** Debezium's outbox event router's headers, then {@code placements} in their order. */
  static KafkaRecords debezium(List<HeaderPlacement> placements) {
    return new KafkaRecords(List.copyOf(placements));
  }

  /** The records of {@code settings}. */
  static KafkaRecords of(KafkaSinkSettings settings) {
    return settings.debeziumHeaders() == null ? RELAY : debezium(settings.debeziumHeaders());
  }

  /** The record for {@code routed}; the timestamp is left to the producer (send time). */
  ProducerRecord<String, byte[]> toRecord(RoutedEvent routed) {
    OutboxEvent event = routed.event();
    RecordHeaders headers = new RecordHeaders();
    if (debezium == null) {
      headers.add(EVENT_ID, utf8(event.eventId().toString()));
      headers.add(EVENT_TYPE, utf8(event.eventType()));
      headers.add(AGGREGATE_TYPE, utf8(event.aggregateType()));
      headers.add(AGGREGATE_ID, utf8(event.aggregateId()));
      headers.add(CREATED_AT, createdAt(event.createdAt())); // ISO-8601
    } else {
      headers.add(DEBEZIUM_ID, utf8(event.eventId().toString()));
      for (HeaderPlacement placement : debezium) {
        if (headers.lastHeader(placement.header()) == null) {
          headers.add(placement.header(), utf8(placement.field().valueOf(event)));
        }
      }
    }
    // Then the pipeline's extra headers and the row's own, each sorted by name; a name already
    // present keeps its first value.
    addAbsent(headers, routed.extraHeaders());
    addAbsent(headers, event.headers());
    return new ProducerRecord<>(
        routed.destination(), null, null, event.aggregateId(), event.payload(), headers);
  }

  private static void addAbsent(RecordHeaders headers, Map<String, String> more) {
    if (more.isEmpty()) {
      return;
    }
    for (Map.Entry<String, String> h : new TreeMap<>(more).entrySet()) {
      if (headers.lastHeader(h.getKey()) == null) {
        headers.add(h.getKey(), utf8(h.getValue()));
      }
    }
  }

  /**
   * {@code at} in ISO-8601 ({@link Instant#toString}), UTF-8. The events of one transaction share
   * their created_at and come one after the other, and {@code Instant.toString} is the costliest
   * part of building a record: the last one rendered is kept (an immutable pair, so lanes sharing
   * it race harmlessly; header values are never modified once added).
   */
  static byte[] createdAt(Instant at) {
    CreatedAt last = lastCreatedAt;
    if (!last.instant().equals(at)) {
      last = new CreatedAt(at, utf8(at.toString()));
      lastCreatedAt = last;
    }
    return last.iso();
  }

  private static volatile CreatedAt lastCreatedAt =
      new CreatedAt(Instant.EPOCH, utf8(Instant.EPOCH.toString()));

  private record CreatedAt(Instant instant, byte[] iso) {}

  /** The record's key, value and header bytes: what counts against Kafka's size limits. */
  static int size(ProducerRecord<String, byte[]> record) {
    int size = record.key() == null ? 0 : utf8(record.key()).length;
    size += record.value() == null ? 0 : record.value().length;
    for (Header h : record.headers()) {
      size += utf8(h.key()).length + (h.value() == null ? 0 : h.value().length);
    }
    return size;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
