package io.outbox.sink.rabbitmq;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.testkit.TestEvents;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;

/** Test events: {@link TestEvents#event}, created at a fixed time. */
final class Events {

  static final Instant CREATED_AT = TestEvents.CREATED_AT;

  private Events() {}

  static OutboxEvent event(String aggregateId, String payload, Map<String, String> headers) {
    return TestEvents.event(aggregateId, payload.getBytes(StandardCharsets.UTF_8), headers);
  }

  static RoutedEvent routed(String exchange, String aggregateId, String payload) {
    return new RoutedEvent(event(aggregateId, payload, Map.of()), exchange);
  }
}
