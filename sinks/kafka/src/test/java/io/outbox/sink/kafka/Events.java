package io.outbox.sink.kafka;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/** Test events. */
final class Events {

  private static final AtomicLong IDS = new AtomicLong();

  private Events() {}

  static OutboxEvent event(String aggregateId, String payload) {
    return event(aggregateId, payload.getBytes(StandardCharsets.UTF_8), Map.of());
  }

  static OutboxEvent event(String aggregateId, byte[] payload, Map<String, String> headers) {
    return new OutboxEvent(
        IDS.incrementAndGet(),
        UUID.randomUUID(),
        "order",
        aggregateId,
        "OrderCreated",
        null,
        payload,
        PayloadFormat.JSON,
        headers,
        Instant.parse("2024-05-01T10:15:30.123456Z"),
        0);
  }

  static RoutedEvent routed(String topic, String aggregateId, String payload) {
    return new RoutedEvent(event(aggregateId, payload), topic);
  }
}
