package io.outbox.client;

import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * One event an application writes into its outbox with {@link OutboxWriter}. The event id is
 * generated here when not given, so the writer can return it; {@code availableAt} defaults to the
 * database's {@code now()}. {@link #toString()} never shows the payload.
 *
 * @param eventId the idempotency key sent to the broker; generated when {@code null}
 * @param aggregateType e.g. {@code order}; routing input, required
 * @param aggregateId the ordering and partition key, required
 * @param eventType e.g. {@code OrderCreated}, required
 * @param destination the topic or exchange, overriding routing; {@code null} to route
 * @param payload the message body as text: JSON for a {@code jsonb} or {@code json} column, any
 *     text for {@code text}; a {@code bytea} column stores its UTF-8 bytes. Required unless {@code
 *     payloadBytes} is given
 * @param headers string headers added to the message; {@code null} means none
 * @param availableAt not published before this instant; {@code null} means now (database clock)
 * @param payloadBytes the message body as bytes (Protobuf, Avro, ...), for a {@code bytea} column
 *     only; {@code null} when {@code payload} is given. {@link #payloadBytes()} returns a copy.
 */
public record OutboxMessage(
    UUID eventId,
    String aggregateType,
    String aggregateId,
    String eventType,
    String destination,
    String payload,
    Map<String, String> headers,
    Instant availableAt,
    byte[] payloadBytes) {

  /** Validates the required fields and generates a missing event id. */
  public OutboxMessage {
    eventId = eventId == null ? UUID.randomUUID() : eventId;
    requireText(aggregateType, "aggregateType");
    requireText(aggregateId, "aggregateId");
    requireText(eventType, "eventType");
    if (destination != null && destination.isBlank()) {
      throw new IllegalArgumentException(
          "OutboxMessage.destination must be null (route it) or a name, got a blank string");
    }
    if (payloadBytes == null) {
      requireText(payload, "payload");
    } else if (payload != null) {
      throw new IllegalArgumentException("OutboxMessage needs a payload or payloadBytes, got both");
    } else {
      payloadBytes = payloadBytes.clone();
    }
    headers = copyHeaders(headers);
  }

  /** A message with a text payload. */
  public OutboxMessage(
      UUID eventId,
      String aggregateType,
      String aggregateId,
      String eventType,
      String destination,
      String payload,
      Map<String, String> headers,
      Instant availableAt) {
    this(
        eventId,
        aggregateType,
        aggregateId,
        eventType,
        destination,
        payload,
        headers,
        availableAt,
        null);
  }

  /** A copy of the binary payload, or {@code null} for a text payload. */
  @Override
  public byte[] payloadBytes() {
    return payloadBytes == null ? null : payloadBytes.clone();
  }

  /** Whether the payload is bytes ({@link #payloadBytes()}) rather than text. */
  public boolean binary() {
    return payloadBytes != null;
  }

  /** Equal when every field is, the binary payload compared by content. */
  @Override
  public boolean equals(Object other) {
    return other instanceof OutboxMessage m
        && eventId.equals(m.eventId)
        && aggregateType.equals(m.aggregateType)
        && aggregateId.equals(m.aggregateId)
        && eventType.equals(m.eventType)
        && Objects.equals(destination, m.destination)
        && Objects.equals(payload, m.payload)
        && headers.equals(m.headers)
        && Objects.equals(availableAt, m.availableAt)
        && Arrays.equals(payloadBytes, m.payloadBytes);
  }

  @Override
  public int hashCode() {
    return 31
            * Objects.hash(
                eventId,
                aggregateType,
                aggregateId,
                eventType,
                destination,
                payload,
                headers,
                availableAt)
        + Arrays.hashCode(payloadBytes);
  }

  /** An event with a generated id, no headers, routed destination, available at once. */
  public static OutboxMessage of(
      String aggregateType, String aggregateId, String eventType, String payload) {
    return new OutboxMessage(
        null, aggregateType, aggregateId, eventType, null, payload, null, null);
  }

  /**
   * A builder; {@code aggregateType}, {@code aggregateId}, {@code eventType}, {@code payload} are
   * required.
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Shows the fields except the payload, of which only the length is shown. */
  @Override
  public String toString() {
    return "OutboxMessage[eventId="
        + eventId
        + ", aggregateType="
        + aggregateType
        + ", aggregateId="
        + aggregateId
        + ", eventType="
        + eventType
        + ", destination="
        + destination
        + ", payload=<"
        + (payloadBytes == null ? payload.length() + " chars" : payloadBytes.length + " bytes")
        + ">, headers="
        + headers.keySet()
        + ", availableAt="
        + availableAt
        + "]";
  }

  private static void requireText(String value, String field) {
    if (value == null) {
      throw new IllegalArgumentException("OutboxMessage." + field + " is required, got null");
    }
    if (value.isBlank()) {
      throw new IllegalArgumentException(
          "OutboxMessage." + field + " is required, got a blank string");
    }
  }

  private static Map<String, String> copyHeaders(Map<String, String> headers) {
    if (headers == null) {
      return Map.of();
    }
    Map<String, String> copy = new LinkedHashMap<>();
    headers.forEach(
        (name, value) -> {
          if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException(
                "OutboxMessage.headers must not have a null or empty name");
          }
          if (value == null) {
            throw new IllegalArgumentException(
                "OutboxMessage.headers['" + name + "'] must not be null");
          }
          copy.put(name, value);
        });
    return Map.copyOf(copy);
  }

  /** Builds an {@link OutboxMessage}; not thread-safe. */
  public static final class Builder {
    private UUID eventId;
    private String aggregateType;
    private String aggregateId;
    private String eventType;
    private String destination;
    private String payload;
    private byte[] payloadBytes;
    private final Map<String, String> headers = new LinkedHashMap<>();
    private Instant availableAt;

    private Builder() {}

    public Builder eventId(UUID eventId) {
      this.eventId = eventId;
      return this;
    }

    /** The aggregate the event belongs to: its type and id (the ordering key). */
    public Builder aggregate(String aggregateType, String aggregateId) {
      this.aggregateType = aggregateType;
      this.aggregateId = aggregateId;
      return this;
    }

    public Builder aggregateType(String aggregateType) {
      this.aggregateType = aggregateType;
      return this;
    }

    public Builder aggregateId(String aggregateId) {
      this.aggregateId = aggregateId;
      return this;
    }

    public Builder eventType(String eventType) {
      this.eventType = eventType;
      return this;
    }

    public Builder destination(String destination) {
      this.destination = destination;
      return this;
    }

    /** The body as text: JSON for a {@code jsonb} or {@code json} column. */
    public Builder payload(String payload) {
      this.payload = payload;
      this.payloadBytes = null;
      return this;
    }

    /** The body as bytes, for a {@code bytea} payload column. */
    public Builder payload(byte[] payload) {
      this.payloadBytes = payload;
      this.payload = null;
      return this;
    }

    /** Adds (or replaces) one header. */
    public Builder header(String name, String value) {
      if (name == null || value == null) {
        throw new IllegalArgumentException(
            "OutboxMessage.headers needs a name and a value, got name="
                + name
                + (value == null ? " with a null value" : ""));
      }
      headers.put(name, value);
      return this;
    }

    /** Adds (or replaces) these headers. */
    public Builder headers(Map<String, String> headers) {
      Objects.requireNonNull(headers, "headers").forEach(this::header);
      return this;
    }

    public Builder availableAt(Instant availableAt) {
      this.availableAt = availableAt;
      return this;
    }

    /**
     * The message.
     *
     * @throws IllegalArgumentException naming the missing or blank field
     */
    public OutboxMessage build() {
      return new OutboxMessage(
          eventId,
          aggregateType,
          aggregateId,
          eventType,
          destination,
          payload,
          headers,
          availableAt,
          payloadBytes);
    }
  }
}
