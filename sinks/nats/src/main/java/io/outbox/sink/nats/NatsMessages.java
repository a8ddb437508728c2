package io.outbox.sink.nats;

import static io.outbox.relay.spi.support.RelayHeaders.AGGREGATE_ID;
import static io.outbox.relay.spi.support.RelayHeaders.AGGREGATE_TYPE;
import static io.outbox.relay.spi.support.RelayHeaders.CREATED_AT;
import static io.outbox.relay.spi.support.RelayHeaders.EVENT_ID;
import static io.outbox.relay.spi.support.RelayHeaders.EVENT_TYPE;

import io.nats.client.Message;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

/**
 * Maps an event to its JetStream message: subject = destination, data = payload, headers = the
 * relay's five plus {@code content-type}, then the pipeline's extra headers, then the row's own
 * (the relay's win over extra and row headers of the same name, extra over row headers, as for
 * Kafka and RabbitMQ). NATS header values are US-ASCII: a value with any other character (or
 * leading or trailing blanks, or the look of an encoded word) is sent as an RFC 2047 encoded word,
 * {@code =?UTF-8?B?<base64 of its UTF-8 bytes>?=}, which {@link #decode} turns back.
 */
final class NatsMessages {

  private static final String ENCODED_PREFIX = "=?UTF-8?B?";
  private static final String ENCODED_SUFFIX = "?=";

  private NatsMessages() {}

  /**
   * The message of {@code routed}, without the {@code Nats-Msg-Id} header (set by the publish
   * options).
   *
   * @throws IllegalArgumentException naming a header whose name NATS cannot carry (permanent)
   */
  static Message toMessage(RoutedEvent routed) {
    OutboxEvent event = routed.event();
    Headers headers = new Headers();
    headers.put(EVENT_ID, event.eventId().toString());
    headers.put(EVENT_TYPE, encode(event.eventType()));
    headers.put(AGGREGATE_TYPE, encode(event.aggregateType()));
    headers.put(AGGREGATE_ID, encode(event.aggregateId()));
    headers.put(CREATED_AT, event.createdAt().toString()); // ISO-8601
    headers.put("content-type", event.payloadFormat().contentType());
    addAbsent(headers, routed.extraHeaders());
    addAbsent(headers, event.headers());
    return NatsMessage.builder()
        .subject(routed.destination())
        .headers(headers)
        .data(event.payload())
        .build();
  }

  private static void addAbsent(Headers headers, Map<String, String> more) {
    for (Map.Entry<String, String> h : new TreeMap<>(more).entrySet()) {
      String problem = nameProblem(h.getKey());
      if (problem != null) {
        throw new IllegalArgumentException(problem);
      }
      if (!headers.containsKey(h.getKey())) {
        headers.put(h.getKey(), encode(h.getValue()));
      }
    }
  }

  /** Why NATS cannot carry a header of this name, or {@code null}. */
  static String nameProblem(String name) {
    if (name.isEmpty()) {
      return "a header with an empty name cannot be sent to NATS";
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < 33 || c > 126 || c == ':') {
        return "header name '"
            + name
            + "' cannot be sent to NATS (printable US-ASCII without ':' or blanks only)";
      }
    }
    return null;
  }

  /** {@code value} as it is when NATS can carry it unchanged, else as an RFC 2047 encoded word. */
  static String encode(String value) {
    if (value == null || value.isEmpty() || plain(value)) {
      return value;
    }
    return ENCODED_PREFIX
        + Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8))
        + ENCODED_SUFFIX;
  }

  /** The inverse of {@link #encode}: what a consumer does with a header value. */
  static String decode(String value) {
    if (value != null && value.startsWith(ENCODED_PREFIX) && value.endsWith(ENCODED_SUFFIX)) {
      String base64 =
          value.substring(ENCODED_PREFIX.length(), value.length() - ENCODED_SUFFIX.length());
      try {
        return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        return value;
      }
    }
    return value;
  }

  private static boolean plain(String value) {
    if (value.charAt(0) == ' ' || value.charAt(value.length() - 1) == ' ') {
      return false; // may be trimmed on the way
    }
    if (value.startsWith(ENCODED_PREFIX) && value.endsWith(ENCODED_SUFFIX)) {
      return false; // would be taken for an encoded word
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 32 || c > 126) {
        return false;
      }
    }
    return true;
  }
}
