package io.outbox.relay.spi.support;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Settlement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The names of the five headers every sink adds to each message, before the pipeline's extra
 * headers and the row's own (which never replace them), and {@link #of} to build them all.
 * Consumers find the event's identity under these names whatever the broker.
 */
public final class RelayHeaders {

  /** The event's {@code event_id}, the consumer's idempotency key. */
  public static final String EVENT_ID = "event-id";

  /** The event's {@code event_type}. */
  public static final String EVENT_TYPE = "event-type";

  /** The event's {@code aggregate_type}. */
  public static final String AGGREGATE_TYPE = "aggregate-type";

  /** The event's {@code aggregate_id}, its ordering key. */
  public static final String AGGREGATE_ID = "aggregate-id";

  /** The event's {@code created_at}, ISO-8601. */
  public static final String CREATED_AT = "created-at";

  /** The payload's media type, from the row's payload format. */
  public static final String CONTENT_TYPE = "content-type";

  /** A dead letter's copy ({@code dead-letter.destination}): why it was dead-lettered. */
  public static final String DEAD_LETTER_REASON = "dead-letter-reason";

  /** A dead letter's copy: its failed attempts. */
  public static final String DEAD_LETTER_ATTEMPTS = "dead-letter-attempts";

  /** A dead letter's copy: its last error. */
  public static final String DEAD_LETTER_ERROR = "dead-letter-error";

  private RelayHeaders() {}

  /** The headers a dead letter's copy carries beside the relay's own. */
  public static Map<String, String> deadLetter(Settlement.DeadLetter dl) {
    return Map.of(
        DEAD_LETTER_REASON, dl.reason().columnValue(),
        DEAD_LETTER_ATTEMPTS, Integer.toString(dl.attempts()),
        DEAD_LETTER_ERROR, dl.error());
  }

  /**
   * Every header of {@code routed}'s message, in the order to send them: the relay's five and
   * {@link #CONTENT_TYPE}, then the pipeline's extra headers, then the row's own, each of these two
   * sorted by name. The first of a name wins: the relay's over extra and row headers, extra over
   * row headers.
   */
  public static Map<String, String> of(RoutedEvent routed) {
    OutboxEvent event = routed.event();
    Map<String, String> out = new LinkedHashMap<>();
    out.put(EVENT_ID, event.eventId().toString());
    out.put(EVENT_TYPE, event.eventType());
    out.put(AGGREGATE_TYPE, event.aggregateType());
    out.put(AGGREGATE_ID, event.aggregateId());
    out.put(CREATED_AT, event.createdAt().toString()); // ISO-8601
    out.put(CONTENT_TYPE, event.payloadFormat().contentType());
    new TreeMap<>(routed.extraHeaders()).forEach(out::putIfAbsent);
    new TreeMap<>(event.headers()).forEach(out::putIfAbsent);
    return out;
  }
}
