package io.outbox.sink.nats;

import io.nats.client.Message;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.support.RelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * Maps an event to its JetStream message: subject = destination, data = payload, headers = {@link
 * RelayHeaders#of} (the relay's five plus {@code content-type}, then the pipeline's extra headers,
 * then the row's own). NATS header values are US-ASCII: a value with any other character (or
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
    Headers headers = new Headers();
    for (Map.Entry<String, String> h : RelayHeaders.of(routed).entrySet()) {
      String problem = nameProblem(h.getKey());
      if (problem != null) {
        throw new IllegalArgumentException(problem);
      }
      headers.put(h.getKey(), encode(h.getValue()));
    }
    return NatsMessage.builder()
        .subject(routed.destination())
        .headers(headers)
        .data(routed.event().payload())
        .build();
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
