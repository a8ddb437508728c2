package io.outbox.sink.rabbitmq;

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

  static final Instant CREATED_AT = Instant.parse("2024-05-01T10:15:30.123456Z");

  private static final AtomicLong IDS = new AtomicLong();

  private Events() {}

  static OutboxEvent event(String aggregateId, String payload, Map<String, String> headers) {
    return new OutboxEvent(
        IDS.incrementAndGet(),
        UUID.randomUUID(),
        "order",
        aggregateId,
        "OrderCreated",
        null,
        payload.getBytes(StandardCharsets.UTF_8),
        PayloadFormat.JSON,
        headers,
        CREATED_AT,
        0);
  }

  static RoutedEvent routed(String exchange, String aggregateId, String payload) {
    return new RoutedEvent(event(aggregateId, payload, Map.of()), exchange);
  }
}
