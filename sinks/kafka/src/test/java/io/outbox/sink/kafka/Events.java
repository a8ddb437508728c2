package io.outbox.sink.kafka;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.testkit.TestEvents;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Test events: {@link TestEvents#event}, created at a fixed time. */
final class Events {

  private Events() {}

  static OutboxEvent event(String aggregateId, String payload) {
    return event(aggregateId, payload.getBytes(StandardCharsets.UTF_8), Map.of());
  }

  static OutboxEvent event(String aggregateId, byte[] payload, Map<String, String> headers) {
    return TestEvents.event(aggregateId, payload, headers);
  }

  static RoutedEvent routed(String topic, String aggregateId, String payload) {
    return new RoutedEvent(event(aggregateId, payload), topic);
  }
}
