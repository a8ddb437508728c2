package io.outbox.relay.spi;

import java.util.Map;
import java.util.Objects;

/**
 * An event with the destination the pipeline resolved for it, as handed to a {@link Sink}.
 *
 * @param event the outbox event
 * @param destination the Kafka topic or RabbitMQ exchange; never blank
 * @param extraHeaders headers the pipeline adds beyond the event's own (e.g. for dead letters)
 */
public record RoutedEvent(OutboxEvent event, String destination, Map<String, String> extraHeaders) {
  public RoutedEvent {
    Objects.requireNonNull(event, "event");
    Objects.requireNonNull(destination, "destination");
    extraHeaders = extraHeaders == null ? Map.of() : Map.copyOf(extraHeaders);
  }

  public RoutedEvent(OutboxEvent event, String destination) {
    this(event, destination, Map.of());
  }
}
