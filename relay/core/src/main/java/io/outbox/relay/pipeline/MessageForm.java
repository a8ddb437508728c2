package io.outbox.relay.pipeline;

import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import io.cloudevents.core.format.EventFormat;
import io.cloudevents.jackson.JsonFormat;
import io.outbox.relay.config.PipelineSettings.CloudEventsMode;
import io.outbox.relay.config.PipelineSettings.CloudEventsSettings;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.support.CloudEventsAttributes;
import io.outbox.relay.spi.support.RelayHeaders;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a message is made of, the one place that decides it for every publish of a pipeline (waves,
 * exactly-once transactions, dead-letter copies): the event as it is ({@code cloudevents.mode =
 * none}), or as a CloudEvent ({@link CloudEventsAttributes}) in binary content mode (the payload as
 * the body, the attributes as headers under the sink's binding prefix) or structured mode (the JSON
 * event format as the body, written by the CloudEvents SDK).
 */
final class MessageForm {

  /** Plain messages. */
  static final MessageForm PLAIN = new MessageForm(CloudEventsMode.NONE, null, null);

  /** JSON and binary payloads: {@code data} inline for JSON, {@code data_base64} otherwise. */
  private static final EventFormat JSON_FORMAT = new JsonFormat();

  /** Text payloads: {@code data} as a JSON string. */
  private static final EventFormat TEXT_FORMAT = new JsonFormat(false, true);

  private final CloudEventsMode mode;
  private final Router source;
  private final String headerPrefix;

  private MessageForm(CloudEventsMode mode, Router source, String headerPrefix) {
    this.mode = mode;
    this.source = source;
    this.headerPrefix = headerPrefix;
  }

  /**
   * The form {@code settings} ask for; {@code headerPrefix} is the sink's CloudEvents binding
   * prefix ({@link io.outbox.relay.spi.Sink#cloudEventsHeaderPrefix()}).
   */
  static MessageForm of(CloudEventsSettings settings, String headerPrefix) {
    if (settings.mode() == CloudEventsMode.NONE) {
      return PLAIN;
    }
    return new MessageForm(
        settings.mode(), Router.compile(settings.sourceTemplate()), headerPrefix);
  }

  /** The message of {@code event} for {@code destination}. */
  RoutedEvent routed(OutboxEvent event, String destination) {
    return routed(event, destination, Map.of());
  }

  /**
   * The message of {@code event} for {@code destination}, with {@code extraHeaders} (which the
   * CloudEvents headers do not replace).
   */
  RoutedEvent routed(OutboxEvent event, String destination, Map<String, String> extraHeaders) {
    if (mode == CloudEventsMode.NONE) {
      return new RoutedEvent(event, destination, extraHeaders);
    }
    String rendered = sourceOf(event);
    Map<String, String> headers = new LinkedHashMap<>(extraHeaders);
    if (mode == CloudEventsMode.BINARY) {
      CloudEventsAttributes.binaryHeaders(event, rendered, headerPrefix)
          .forEach(headers::putIfAbsent);
      return new RoutedEvent(event, destination, headers);
    }
    OutboxEvent structured =
        event.withBody(structuredBody(event, rendered), PayloadFormat.CLOUDEVENTS_JSON);
    headers.putIfAbsent(RelayHeaders.CONTENT_TYPE, PayloadFormat.CLOUDEVENTS_JSON.contentType());
    return new RoutedEvent(structured, destination, headers);
  }

  /**
   * The rendered source as a URI reference: characters a URI may not hold (a space in an aggregate
   * type, say) percent-encoded as UTF-8; an empty render falls back to "/".
   */
  private String sourceOf(OutboxEvent event) {
    String rendered = source.render(event);
    return rendered == null ? "/" : uriReference(rendered);
  }

  /** {@code text} with every character a URI reference may not hold percent-encoded. */
  static String uriReference(String text) {
    StringBuilder out = new StringBuilder(text.length());
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < bytes.length; i++) {
      int b = bytes[i] & 0xff;
      boolean escape =
          b == '%' && !(i + 2 < bytes.length && hex(bytes[i + 1]) && hex(bytes[i + 2]));
      if (b < 0x80 && URI_CHARS.indexOf(b) >= 0 && !escape) {
        out.append((char) b);
      } else {
        out.append('%').append(HEX[b >> 4]).append(HEX[b & 0xf]);
      }
    }
    return out.toString();
  }

  private static boolean hex(byte b) {
    return Character.digit(b, 16) >= 0;
  }

  private static final String URI_CHARS =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%";

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  /**
   * The JSON event format of {@code event}: its attributes as {@link CloudEventsAttributes} takes
   * them from the row, its payload as the data.
   */
  static byte[] structuredBody(OutboxEvent event, String source) {
    CloudEventBuilder builder = CloudEventBuilder.v1();
    CloudEventsAttributes.of(event, source)
        .forEach(
            (name, value) -> {
              if (!name.equals("specversion")) { // v1() is the version
                builder.withContextAttribute(name, value);
              }
            });
    CloudEvent cloudEvent = builder.withData(event.payload()).build();
    EventFormat format = event.payloadFormat() == PayloadFormat.TEXT ? TEXT_FORMAT : JSON_FORMAT;
    return format.serialize(cloudEvent);
  }
}
