package io.outbox.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.AbstractRecords;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

class OutboxRecordsTest {

  private static OutboxEvent event(long id, int attempts, Map<String, String> headers) {
    return new OutboxEvent(
        id,
        UUID.fromString("00000000-0000-0000-0000-00000000000" + id),
        "order",
        "o-" + id,
        "OrderCreated",
        null,
        "{\"n\":1}".getBytes(StandardCharsets.UTF_8),
        PayloadFormat.JSON,
        headers,
        Instant.parse("2026-01-02T03:04:05Z"),
        attempts);
  }

  @Test
  void carriesTheDaemonsWireFormat() {
    OutboxEvent e = event(7, 0, Map.of("trace", "t-1", "event-type", "spoofed"));
    SourceRecord r = OutboxRecords.toRecord("orders", 3, "outbox.order", e, "7:0");
    assertThat(r.topic()).isEqualTo("outbox.order");
    assertThat(r.key()).isEqualTo("o-7");
    assertThat((byte[]) r.value()).isEqualTo(e.payload());
    Map<String, Object> headers = firstHeaders(r);
    assertThat(headers)
        .containsExactly(
            Map.entry("event-id", e.eventId().toString()),
            Map.entry("event-type", "OrderCreated"),
            Map.entry("aggregate-type", "order"),
            Map.entry("aggregate-id", "o-7"),
            Map.entry("created-at", "2026-01-02T03:04:05Z"),
            Map.entry("trace", "t-1"));
    assertThat(r.headers().allWithName("event-type")).toIterable().hasSize(1);
    assertThat(OutboxRecords.lane(r)).isEqualTo(3);
    assertThat(OutboxRecords.id(r)).isEqualTo(7);
  }

  /** What the connector measures against max-record-bytes is never below the producer's count. */
  @Test
  void theSizeIsAtLeastWhatTheProducerCounts() {
    for (String payload : List.of("", "{\"n\":1}", "x".repeat(100_000))) {
      OutboxEvent e =
          new OutboxEvent(
              9,
              UUID.randomUUID(),
              "order",
              "ö-" + payload.length(),
              "OrderCreated",
              null,
              payload.getBytes(StandardCharsets.UTF_8),
              PayloadFormat.JSON,
              Map.of("trace", "t-ü", "tenant", "x".repeat(300)),
              Instant.parse("2026-01-02T03:04:05Z"),
              0);
      SourceRecord r = OutboxRecords.toRecord("orders", 0, "outbox.order", e, "9:0");
      List<org.apache.kafka.common.header.Header> headers = new ArrayList<>();
      for (Header h : r.headers()) {
        headers.add(
            new RecordHeader(h.key(), h.value().toString().getBytes(StandardCharsets.UTF_8)));
      }
      int producer =
          AbstractRecords.estimateSizeInBytesUpperBound(
              RecordBatch.CURRENT_MAGIC_VALUE,
              CompressionType.NONE,
              r.key().toString().getBytes(StandardCharsets.UTF_8),
              (byte[]) r.value(),
              headers.toArray(new org.apache.kafka.common.header.Header[0]));
      assertThat(OutboxRecords.sizeInBytes(r))
          .isGreaterThanOrEqualTo(producer)
          .isLessThan(producer + 200);
    }
  }

  @Test
  void aCommittedBatchNamesEachDeliveryAttempt() {
    String batch = OutboxRecords.batch(List.of(event(1, 0, Map.of()), event(2, 3, Map.of())));
    assertThat(batch).isEqualTo("1:0,2:3");
    assertThat(OutboxRecords.committedBatch(Map.of(OutboxRecords.BATCH, batch)))
        .containsExactlyInAnyOrder("1:0", "2:3")
        // the same row after a recorded retry is another attempt, not the committed one
        .doesNotContain("2:4");
    assertThat(OutboxRecords.committedBatch(null)).isEmpty();
    assertThat(OutboxRecords.committedBatch(Map.of(OutboxRecords.BATCH, ""))).isEmpty();
  }

  @Test
  void aDeadLettersCopyCarriesTheDaemonsDeadLetterHeadersAndTheLanesBatch() {
    OutboxEvent e = event(5, 2, Map.of("trace", "t-5"));
    SourceRecord r =
        OutboxRecords.deadLetterCopy(
            "orders",
            1,
            "outbox.dead",
            new Settlement.DeadLetter(
                e, Settlement.DeadLetterReason.MAX_ATTEMPTS, 3, "broker said no"),
            "4:0,5:2");
    assertThat(r.topic()).isEqualTo("outbox.dead");
    assertThat(r.key()).isEqualTo("o-5");
    assertThat((byte[]) r.value()).isEqualTo(e.payload());
    Map<String, Object> headers = firstHeaders(r);
    assertThat(headers)
        .containsEntry("event-id", e.eventId().toString())
        .containsEntry("dead-letter-reason", "max-attempts")
        .containsEntry("dead-letter-attempts", "3")
        .containsEntry("dead-letter-error", "broker said no")
        .containsEntry("trace", "t-5");
    assertThat(OutboxRecords.isDeadLetterCopy(r)).isTrue();
    assertThat(OutboxRecords.isDeadLetterCopy(OutboxRecords.toRecord("orders", 1, "t", e, "")))
        .isFalse();
    assertThat(OutboxRecords.lane(r)).isEqualTo(1);
    assertThat(OutboxRecords.id(r)).isEqualTo(5);
    // The lane's last committed offset still names the batch's deliveries.
    assertThat(
            OutboxRecords.committedBatch(new java.util.HashMap<String, Object>(r.sourceOffset())))
        .containsExactlyInAnyOrder("4:0", "5:2");
  }

  /** Each header name's first value, in order. */
  private static Map<String, Object> firstHeaders(SourceRecord r) {
    Map<String, Object> headers = new java.util.LinkedHashMap<>();
    for (Header h : r.headers()) {
      headers.putIfAbsent(h.key(), h.value());
    }
    return headers;
  }
}
