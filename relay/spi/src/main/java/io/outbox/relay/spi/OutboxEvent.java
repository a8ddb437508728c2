package io.outbox.relay.spi;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * One committed row of the outbox table, as a source read it.
 *
 * @param id the row's {@code id}: insertion order, and the order of events within one key
 * @param eventId the idempotency key sent to the broker ({@code event-id} header / {@code
 *     message_id})
 * @param aggregateType routing input, e.g. {@code order}
 * @param aggregateId the ordering and partition key
 * @param eventType e.g. {@code OrderCreated}
 * @param destination the row's explicit destination, or {@code null} to route by template
 * @param payload the message body, byte for byte
 * @param payloadFormat how the payload column was typed, which decides the content type
 * @param headers string headers added to the message
 * @param createdAt when the application wrote the row
 * @param attempts failed delivery attempts already attributed to this event
 * @param defect why the row cannot be published as it is (a NULL key or payload, headers that are
 *     not JSON), one line naming the column without its value; {@code null} for a good row. The
 *     pipeline dead-letters an event with a defect as permanent without publishing it; its other
 *     components then hold placeholders (empty strings, an empty payload, no headers)
 */
public record OutboxEvent(
    long id,
    UUID eventId,
    String aggregateType,
    String aggregateId,
    String eventType,
    String destination,
    byte[] payload,
    PayloadFormat payloadFormat,
    Map<String, String> headers,
    Instant createdAt,
    int attempts,
    String defect) {

  /** A good row: no defect. */
  public OutboxEvent(
      long id,
      UUID eventId,
      String aggregateType,
      String aggregateId,
      String eventType,
      String destination,
      byte[] payload,
      PayloadFormat payloadFormat,
      Map<String, String> headers,
      Instant createdAt,
      int attempts) {
    this(
        id,
        eventId,
        aggregateType,
        aggregateId,
        eventType,
        destination,
        payload,
        payloadFormat,
        headers,
        createdAt,
        attempts,
        null);
  }

  public OutboxEvent {
    Objects.requireNonNull(eventId, "eventId");
    Objects.requireNonNull(aggregateType, "aggregateType");
    Objects.requireNonNull(aggregateId, "aggregateId");
    Objects.requireNonNull(eventType, "eventType");
    Objects.requireNonNull(payload, "payload");
    Objects.requireNonNull(payloadFormat, "payloadFormat");
    Objects.requireNonNull(createdAt, "createdAt");
    headers = headers == null ? Map.of() : Map.copyOf(headers);
  }

  /** This event with {@code attempts} instead of its own (a retry's count); all else kept. */
  public OutboxEvent withAttempts(int attempts) {
    return copy(payload, payloadFormat, attempts);
  }

  /**
   * This event with another message body (an envelope around its payload, such as a CloudEvents
   * structured-mode body); all else kept.
   */
  public OutboxEvent withBody(byte[] body, PayloadFormat format) {
    return copy(body, format, attempts);
  }

  private OutboxEvent copy(byte[] body, PayloadFormat format, int attempts) {
    return new OutboxEvent(
        id,
        eventId,
        aggregateType,
        aggregateId,
        eventType,
        destination,
        body,
        format,
        headers,
        createdAt,
        attempts,
        defect);
  }

  /** The ordering key: events of one key are published in {@link #id()} order. */
  public AggregateKey key() {
    return new AggregateKey(aggregateType, aggregateId);
  }

  /** Identifies the event in logs and errors without revealing its payload. */
  @Override
  public String toString() {
    return "OutboxEvent[id=" + id + ", eventId=" + eventId + ", type=" + eventType + "]";
  }

  // Records compare arrays by reference; events are compared by identity of the row.
  @Override
  public boolean equals(Object o) {
    return o instanceof OutboxEvent other && other.id == id && other.eventId.equals(eventId);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(id) * 31 + eventId.hashCode();
  }
}
