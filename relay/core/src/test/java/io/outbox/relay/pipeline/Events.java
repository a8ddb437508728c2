package io.outbox.relay.pipeline;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

final class Events {
  private Events() {}

  static OutboxEvent event(long id, String aggregateId) {
    return event(id, aggregateId, 0);
  }

  static OutboxEvent event(long id, String aggregateId, int attempts) {
    return event(id, aggregateId, attempts, Map.of());
  }

  /** A row whose {@code headers} column holds {@code headers} (trace context, say). */
  static OutboxEvent event(long id, String aggregateId, int attempts, Map<String, String> headers) {
    return new OutboxEvent(
        id,
        UUID.nameUUIDFromBytes(Long.toString(id).getBytes(StandardCharsets.UTF_8)),
        "order",
        aggregateId,
        "OrderCreated",
        null,
        ("{\"n\":" + id + "}").getBytes(StandardCharsets.UTF_8),
        PayloadFormat.JSON,
        headers,
        Instant.parse("2026-01-01T00:00:00Z"),
        attempts);
  }

  /** A row the source could not read: placeholders and {@code defect}. */
  static OutboxEvent defective(long id, String defect) {
    OutboxEvent e = event(id, "");
    return new OutboxEvent(
        e.id(),
        e.eventId(),
        e.aggregateType(),
        e.aggregateId(),
        e.eventType(),
        e.destination(),
        new byte[0],
        e.payloadFormat(),
        Map.of(),
        e.createdAt(),
        0,
        defect);
  }
}
