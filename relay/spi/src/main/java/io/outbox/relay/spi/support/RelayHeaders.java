package io.outbox.relay.spi.support;

/**
 * The names of the five headers every sink adds to each message, before the pipeline's extra
 * headers and the row's own (which never replace them). Consumers find the event's identity under
 * these names whatever the broker.
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

  private RelayHeaders() {}
}
