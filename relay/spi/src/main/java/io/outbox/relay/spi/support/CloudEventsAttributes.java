package io.outbox.relay.spi.support;

import io.outbox.relay.spi.OutboxEvent;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The CloudEvents 1.0 context attributes of an outbox event, taken from its row: {@code id} = the
 * event id, {@code type} = the event type, {@code source} as the pipeline renders it, {@code
 * subject} and the partitioning extension's {@code partitionkey} = the aggregate id (the key the
 * relay orders by), {@code time} = {@code created_at}, {@code datacontenttype} = the payload's
 * media type. The pipeline puts them in the message (binary content mode: headers under the
 * broker's binding prefix; structured mode: the JSON body); consumers read them with any
 * CloudEvents SDK.
 */
public final class CloudEventsAttributes {

  /** The CloudEvents version the relay writes. */
  public static final String SPEC_VERSION = "1.0";

  private CloudEventsAttributes() {}

  /**
   * Every attribute of {@code event}, by its CloudEvents name, in the order the spec lists them;
   * {@code source} is the rendered source.
   */
  public static Map<String, String> of(OutboxEvent event, String source) {
    Map<String, String> out = new LinkedHashMap<>();
    out.put("specversion", SPEC_VERSION);
    out.put("id", event.eventId().toString());
    out.put("source", source);
    out.put("type", event.eventType());
    out.put("datacontenttype", event.payloadFormat().contentType());
    out.put("subject", event.aggregateId());
    out.put("time", event.createdAt().toString()); // RFC 3339, UTC
    out.put("partitionkey", event.aggregateId());
    return out;
  }

  /**
   * The binary content mode's headers: each attribute under {@code prefix} (the broker binding's,
   * {@link io.outbox.relay.spi.Sink#cloudEventsHeaderPrefix()}) but {@code datacontenttype}, which
   * travels as the message's content type ({@code content-type}).
   */
  public static Map<String, String> binaryHeaders(OutboxEvent event, String source, String prefix) {
    Map<String, String> headers = new LinkedHashMap<>();
    of(event, source)
        .forEach(
            (name, value) -> {
              if (name.equals("datacontenttype")) {
                headers.put(RelayHeaders.CONTENT_TYPE, value);
              } else {
                headers.put(prefix + name, value);
              }
            });
    return headers;
  }
}
