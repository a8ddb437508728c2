package io.outbox.testkit;

import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The events {@link SinkContract} publishes: {@code order}/{@code OrderCreated} events whose JSON
 * body carries their number ({@code {"n":7}}), so that what a broker took can be told apart by its
 * body alone.
 */
final class NumberedEvents {

  private NumberedEvents() {}

  static RoutedEvent routed(String destination, String aggregateId, byte[] payload) {
    return new RoutedEvent(
        TestEvents.event("order", aggregateId, "OrderCreated", payload, PayloadFormat.JSON, null),
        destination);
  }

  /**
   * {@code count} events for {@code destination} numbered from {@code first}, the i-th of them of
   * key {@code keyPrefix + i % keys}: each key's events in the list's order.
   */
  static List<RoutedEvent> batch(
      String destination, String keyPrefix, int keys, int first, int count) {
    List<RoutedEvent> batch = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      batch.add(routed(destination, keyPrefix + i % keys, json(first + i)));
    }
    return batch;
  }

  static byte[] json(int n) {
    return bytes("{\"n\":" + n + "}");
  }

  /** The number {@link #json} wrote into {@code body}. */
  static int number(byte[] body) {
    String s = new String(body, StandardCharsets.UTF_8);
    return Integer.parseInt(s.substring(s.indexOf(':') + 1, s.indexOf('}')));
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
