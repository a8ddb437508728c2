package io.outbox.sink.nats;

import io.nats.client.Message;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.support.AsciiHeaders;
import io.outbox.relay.spi.support.RelayHeaders;
import java.util.Map;

/**
 * Maps an event to its JetStream message: subject = destination, data = payload, headers = {@link
 * RelayHeaders#of} (the relay's five plus {@code content-type}, then the pipeline's extra headers,
 * then the row's own). NATS header values are US-ASCII: a value with any other character (or
 * leading or trailing blanks, or the look of an encoded word) is sent as an RFC 2047 encoded word,
 * {@code =?UTF-8?B?<base64 of its UTF-8 bytes>?=} ({@link AsciiHeaders#encode}), which {@link
 * AsciiHeaders#decode} turns back.
 */
final class NatsMessages {

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
      String problem = AsciiHeaders.nameProblem(h.getKey(), "NATS");
      if (problem != null) {
        throw new IllegalArgumentException(problem);
      }
      headers.put(h.getKey(), AsciiHeaders.encode(h.getValue()));
    }
    return NatsMessage.builder()
        .subject(routed.destination())
        .headers(headers)
        .data(routed.event().payload())
        .build();
  }
}
