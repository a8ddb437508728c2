package io.outbox.soak;

import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * One message read back from the broker.
 *
 * @param eventId the event id from the message ({@code event-id} header, RabbitMQ {@code
 *     message_id})
 * @param at when it was sent (Kafka: the record's producer timestamp) or received (RabbitMQ)
 * @param stream where it was read, e.g. {@code soak.order-3} (a partition) or a queue name
 * @param position its offset in the stream, or its arrival number
 * @param fingerprint a hash of the message's key and body, to tell whether two copies are the same
 */
record Delivery(UUID eventId, Instant at, String stream, long position, int fingerprint) {
  Delivery {
    Objects.requireNonNull(eventId, "eventId");
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(stream, "stream");
  }
}
