package io.outbox.testkit;

import java.util.Map;
import java.util.Objects;

/**
 * A message as a consumer of the broker read it back, in terms every sink shares; what {@link
 * SinkContract} compares with the events it published.
 *
 * @param eventId the broker's own message id if it has one (RabbitMQ {@code message_id}), else the
 *     {@code event-id} header (Kafka)
 * @param key the broker's own message key if it has one (Kafka record key), else {@code null}
 * @param eventType the broker's own message type if it has one (RabbitMQ {@code type}), else the
 *     {@code event-type} header (Kafka)
 * @param headers every header of the message, values as text
 * @param body the message body, as received
 * @param contentType the message's content type if the broker carries one, else {@code null}
 */
public record Delivered(
    String eventId,
    String key,
    String eventType,
    Map<String, String> headers,
    byte[] body,
    String contentType) {

  public Delivered {
    Objects.requireNonNull(body, "body");
    headers = headers == null ? Map.of() : Map.copyOf(headers);
  }

  /** Identifies the message in assertion messages without its body. */
  @Override
  public String toString() {
    return "Delivered[eventId=" + eventId + ", key=" + key + ", type=" + eventType + "]";
  }

  // Records compare arrays by reference; a message is identified by its event id.
  @Override
  public boolean equals(Object o) {
    return o instanceof Delivered other && Objects.equals(other.eventId, eventId);
  }

  @Override
  public int hashCode() {
    return Objects.hashCode(eventId);
  }
}
