package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.cloudevents.CloudEvent;
import io.cloudevents.jackson.JsonFormat;
import io.outbox.relay.config.PipelineSettings.CloudEventsMode;
import io.outbox.relay.config.PipelineSettings.CloudEventsSettings;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.testkit.TestEvents;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MessageFormTest {

  private static final byte[] BINARY = {0, 1, (byte) 0xfe, (byte) 0xff};

  private static OutboxEvent event(String aggregateType, byte[] payload, PayloadFormat format) {
    return TestEvents.event(
        aggregateType, "o-1", "OrderPlaced", payload, format, Map.of("traceparent", "t"));
  }

  private static MessageForm form(CloudEventsMode mode, String source) {
    return MessageForm.of(new CloudEventsSettings(mode, source), "ce_");
  }

  @Test
  void noneLeavesTheEventAsItIs() {
    OutboxEvent event = event("order", utf8("{\"a\":1}"), PayloadFormat.JSON);
    RoutedEvent routed =
        MessageForm.of(CloudEventsSettings.NONE, "ce_").routed(event, "t", Map.of("x", "1"));
    assertThat(routed.event()).isSameAs(event);
    assertThat(routed.extraHeaders()).containsExactly(Map.entry("x", "1"));
  }

  @Test
  void binaryModeKeepsTheBodyAndAddsEveryAttributeAsAHeader() {
    OutboxEvent event = event("order", utf8("{\"a\":1}"), PayloadFormat.JSON);
    RoutedEvent routed =
        form(CloudEventsMode.BINARY, "/shop/${aggregate_type}")
            .routed(event, "t", Map.of("dead-letter-reason", "max-attempts"));

    assertThat(routed.event()).isSameAs(event);
    assertThat(routed.extraHeaders())
        .containsEntry("dead-letter-reason", "max-attempts")
        .containsEntry("ce_specversion", "1.0")
        .containsEntry("ce_id", event.eventId().toString())
        .containsEntry("ce_source", "/shop/order")
        .containsEntry("ce_type", "OrderPlaced")
        .containsEntry("ce_subject", "o-1")
        .containsEntry("ce_partitionkey", "o-1")
        .containsEntry("ce_time", event.createdAt().toString())
        .containsEntry("content-type", "application/json")
        .doesNotContainKey("ce_datacontenttype");
  }

  @Test
  void structuredModeWritesTheJsonEventFormatThatTheSdkReadsBack() {
    OutboxEvent event = event("order", utf8("{\"total\":\"12,50 €\"}"), PayloadFormat.JSON);
    RoutedEvent routed = form(CloudEventsMode.STRUCTURED, "urn:shop").routed(event, "t");

    assertThat(routed.event().payloadFormat()).isEqualTo(PayloadFormat.CLOUDEVENTS_JSON);
    assertThat(routed.extraHeaders())
        .containsEntry("content-type", "application/cloudevents+json; charset=utf-8");
    String json = new String(routed.event().payload(), StandardCharsets.UTF_8);
    assertThat(json).contains("\"data\":{\"total\":\"12,50 €\"}");
    CloudEvent read = new JsonFormat().deserialize(routed.event().payload());
    assertThat(read.getSpecVersion().toString()).isEqualTo("1.0");
    assertThat(read.getId()).isEqualTo(event.eventId().toString());
    assertThat(read.getSource()).hasToString("urn:shop");
    assertThat(read.getType()).isEqualTo("OrderPlaced");
    assertThat(read.getSubject()).isEqualTo("o-1");
    assertThat(read.getExtension("partitionkey")).isEqualTo("o-1");
    assertThat(read.getTime()).isEqualTo(OffsetDateTime.parse(event.createdAt().toString()));
    assertThat(read.getDataContentType()).isEqualTo("application/json");
    assertThat(read.getData().toBytes()).isEqualTo(event.payload());
    // The row's own headers still travel beside the body.
    assertThat(routed.event().headers()).containsEntry("traceparent", "t");
  }

  @Test
  void structuredModeCarriesTextAsAStringAndBytesAsBase64() {
    OutboxEvent text = event("order", utf8("plain ü"), PayloadFormat.TEXT);
    OutboxEvent bytes = event("order", BINARY, PayloadFormat.BINARY);
    MessageForm form = form(CloudEventsMode.STRUCTURED, "urn:shop");

    String textJson = utf8(form.routed(text, "t").event().payload());
    String bytesJson = utf8(form.routed(bytes, "t").event().payload());

    assertThat(textJson).contains("\"data\":\"plain ü\"");
    assertThat(bytesJson).contains("\"data_base64\":\"AAH+/w==\"");
    assertThat(new JsonFormat().deserialize(utf8(bytesJson)).getData().toBytes()).isEqualTo(BINARY);
  }

  @Test
  void aSourceRenderedWithCharactersAUriCannotHoldIsPercentEncoded() {
    OutboxEvent event = event("order item/ü", utf8("{}"), PayloadFormat.JSON);
    RoutedEvent routed = form(CloudEventsMode.BINARY, "/shop/${aggregate_type}").routed(event, "t");
    assertThat(routed.extraHeaders()).containsEntry("ce_source", "/shop/order%20item/%C3%BC");
    assertThat(MessageForm.uriReference("/a%2Fb%zz%")).isEqualTo("/a%2Fb%25zz%25");
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}
