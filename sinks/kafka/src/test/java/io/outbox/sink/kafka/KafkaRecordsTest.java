package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;

class KafkaRecordsTest {

  private static Map<String, String> headers(ProducerRecord<String, byte[]> record) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Header h : record.headers()) {
      assertThat(out).doesNotContainKey(h.key());
      out.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
    }
    return out;
  }

  @Test
  void mapsTheEventToTopicKeyValueAndHeaders() {
    byte[] payload = {0, 1, 2, (byte) 0xff};
    OutboxEvent event = Events.event("ord-ü-1", payload, Map.of("trace-id", "abc"));
    ProducerRecord<String, byte[]> record =
        KafkaRecords.RELAY.toRecord(new RoutedEvent(event, "outbox.order"));
    assertThat(record.topic()).isEqualTo("outbox.order");
    assertThat(record.key()).isEqualTo("ord-ü-1");
    assertThat(record.value()).isEqualTo(payload);
    assertThat(record.partition()).isNull();
    assertThat(record.timestamp()).isNull();
    assertThat(headers(record))
        .containsExactly(
            Map.entry("event-id", event.eventId().toString()),
            Map.entry("event-type", "OrderCreated"),
            Map.entry("aggregate-type", "order"),
            Map.entry("aggregate-id", "ord-ü-1"),
            Map.entry("created-at", "2024-05-01T10:15:30.123456Z"),
            Map.entry("trace-id", "abc"));
  }

  @Test
  void debeziumHeadersAreTheEventIdThenThePlacementsThenTheRowHeaders() {
    OutboxEvent event = Events.event("ord-1", new byte[] {1}, Map.of("trace-id", "abc"));
    List<String> problems = new ArrayList<>();
    KafkaRecords records =
        KafkaRecords.debezium(
            HeaderPlacement.parse("event_type:header:eventType, aggregate_type:header", problems));
    ProducerRecord<String, byte[]> record =
        records.toRecord(new RoutedEvent(event, "outbox.event.order"));

    assertThat(problems).isEmpty();
    assertThat(record.key()).isEqualTo("ord-1");
    assertThat(headers(record))
        .containsExactly(
            Map.entry("id", event.eventId().toString()),
            Map.entry("eventType", "OrderCreated"),
            Map.entry("aggregate_type", "order"),
            Map.entry("trace-id", "abc"));
  }

  @Test
  void placementsOtherThanHeadersOrOfUnknownColumnsAreRefused() {
    List<String> problems = new ArrayList<>();
    HeaderPlacement.parse("event_type:envelope:type, payload:header, type:header:t", problems);

    assertThat(problems)
        .containsExactly(
            "entry 'event_type:envelope:type' places the column in 'envelope'; only header"
                + " placement is supported (not envelope or partition)",
            "entry 'payload:header' must be column:header or column:header:alias, the column one"
                + " of event_id, aggregate_type, aggregate_id, event_type, created_at",
            "entry 'type:header:t' must be column:header or column:header:alias, the column one"
                + " of event_id, aggregate_type, aggregate_id, event_type, created_at");
  }

  @Test
  void relayHeadersWinThenExtraHeadersThenRowHeaders() {
    OutboxEvent event =
        Events.event(
            "a", new byte[0], Map.of("event-id", "forged", "x-reason", "row", "x-row", "1"));
    ProducerRecord<String, byte[]> record =
        KafkaRecords.RELAY.toRecord(
            new RoutedEvent(event, "t", Map.of("x-reason", "permanent", "event-type", "forged")));
    assertThat(headers(record))
        .containsEntry("event-id", event.eventId().toString())
        .containsEntry("event-type", "OrderCreated")
        .containsEntry("x-reason", "permanent")
        .containsEntry("x-row", "1")
        .hasSize(7);
  }

  @Test
  void sizeCountsKeyValueAndHeaderBytes() {
    ProducerRecord<String, byte[]> record =
        KafkaRecords.RELAY.toRecord(
            new RoutedEvent(Events.event("ü", new byte[100], Map.of()), "t"));
    int headerBytes = 0;
    for (Header h : record.headers()) {
      headerBytes += h.key().length() + h.value().length;
    }
    assertThat(KafkaRecords.size(record)).isEqualTo(2 + 100 + headerBytes);
  }

  @Test
  void createdAtIsTheInstantsIsoTextEvenWhenItChanges() {
    Instant a = Instant.parse("2026-11-30T06:32:41.148123Z");
    Instant b = Instant.parse("2026-11-30T06:32:41Z");
    for (Instant at : new Instant[] {a, a, b, a, b, b}) {
      assertThat(new String(KafkaRecords.createdAt(at), StandardCharsets.UTF_8))
          .isEqualTo(at.toString());
    }
  }
}
