package io.outbox.sink.rabbitmq;

import static io.outbox.relay.spi.support.RelayHeaders.AGGREGATE_ID;
import static io.outbox.relay.spi.support.RelayHeaders.AGGREGATE_TYPE;
import static io.outbox.relay.spi.support.RelayHeaders.CREATED_AT;
import static io.outbox.relay.spi.support.RelayHeaders.EVENT_ID;
import static io.outbox.relay.spi.support.RelayHeaders.EVENT_TYPE;

import com.rabbitmq.client.AMQP;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Maps an event to its AMQP message properties (docs/design.md, "Lanes and per-key order"):
 * message_id, type, timestamp, delivery_mode 2, content_type, and headers = the relay's five, then
 * the pipeline's extra headers, then the row's own. The relay's headers win over extra and row
 * headers of the same name, and extra headers over row headers, so that every name appears once (as
 * for Kafka).
 */
final class RabbitMessages {

  /** AMQP short strings (exchange, routing key, header names) hold at most this many bytes. */
  static final int MAX_SHORT_STRING = 255;

  private static final int PERSISTENT = 2;

  private RabbitMessages() {}

  static AMQP.BasicProperties properties(RoutedEvent routed) {
    OutboxEvent event = routed.event();
    String eventId = event.eventId().toString();
    return new AMQP.BasicProperties.Builder()
        .messageId(eventId)
        .type(event.eventType())
        .timestamp(Date.from(event.createdAt()))
        .deliveryMode(PERSISTENT)
        .contentType(event.payloadFormat().contentType())
        .headers(headers(routed, eventId))
        .build();
  }

  static Map<String, Object> headers(RoutedEvent routed) {
    return headers(routed, routed.event().eventId().toString());
  }

  private static Map<String, Object> headers(RoutedEvent routed, String eventId) {
    OutboxEvent event = routed.event();
    Map<String, Object> headers = new LinkedHashMap<>();
    headers.put(EVENT_ID, eventId);
    headers.put(EVENT_TYPE, event.eventType());
    headers.put(AGGREGATE_TYPE, event.aggregateType());
    headers.put(AGGREGATE_ID, event.aggregateId());
    headers.put(CREATED_AT, event.createdAt().toString()); // ISO-8601, e.g. 2024-05-01T10:15:30Z
    new TreeMap<>(routed.extraHeaders()).forEach(headers::putIfAbsent);
    new TreeMap<>(event.headers()).forEach(headers::putIfAbsent);
    return headers;
  }

  /**
   * Why the message can never be published (a name too long for an AMQP short string, a body over
   * the broker's max_message_size when known), or {@code null}; checked before publishing, since
   * the client or the broker would fail the whole channel on it.
   *
   * @param maxBodySize the broker's max_message_size in bytes, or a negative number when unknown
   */
  static String problem(String exchange, String routingKey, RoutedEvent routed, long maxBodySize) {
    int body = routed.event().payload().length;
    if (maxBodySize >= 0 && body > maxBodySize) {
      return tooLarge(exchange, body, maxBodySize);
    }
    if (tooLong(exchange)) {
      return "exchange name of " + bytes(exchange) + " bytes is longer than AMQP's 255";
    }
    if (tooLong(routingKey)) {
      return "exchange '"
          + exchange
          + "': routing key of "
          + bytes(routingKey)
          + " bytes is longer than AMQP's 255";
    }
    for (String name : routed.event().headers().keySet()) {
      if (tooLong(name)) {
        return "exchange '"
            + exchange
            + "': a header name of "
            + bytes(name)
            + " bytes is longer than AMQP's 255";
      }
    }
    return null;
  }

  /** The error of a message whose body is over the broker's max_message_size. */
  static String tooLarge(String exchange, long bodySize, long maxBodySize) {
    return "exchange '"
        + exchange
        + "': message body of "
        + bodySize
        + " bytes is larger than RabbitMQ's max_message_size of "
        + maxBodySize
        + " bytes";
  }

  /** Whether {@code s} takes more than {@link #MAX_SHORT_STRING} bytes as UTF-8. */
  static boolean tooLong(String s) {
    // A char takes at most 3 bytes (a surrogate pair 4 for two), so short names skip the encoding:
    // this runs for every event.
    return s.length() > MAX_SHORT_STRING / 3 && bytes(s) > MAX_SHORT_STRING;
  }

  private static int bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }
}
