package io.outbox.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class OutboxMessageTest {

  @Test
  void generatesAnEventIdWhenNoneIsGiven() {
    OutboxMessage a = OutboxMessage.of("order", "42", "OrderCreated", "{}");
    OutboxMessage b = OutboxMessage.of("order", "42", "OrderCreated", "{}");

    assertThat(a.eventId()).isNotNull().isNotEqualTo(b.eventId());
    assertThat(a.headers()).isEmpty();
    assertThat(a.destination()).isNull();
    assertThat(a.availableAt()).isNull();
  }

  @Test
  void builderSetsEveryField() {
    UUID id = UUID.randomUUID();
    Instant at = Instant.parse("2030-01-02T03:04:05.123456Z");

    OutboxMessage message =
        OutboxMessage.builder()
            .eventId(id)
            .aggregate("order", "42")
            .eventType("OrderCreated")
            .destination("orders")
            .payload("{\"total\":10}")
            .header("trace", "abc")
            .headers(Map.of("tenant", "t1"))
            .availableAt(at)
            .build();

    assertThat(message)
        .isEqualTo(
            new OutboxMessage(
                id,
                "order",
                "42",
                "OrderCreated",
                "orders",
                "{\"total\":10}",
                Map.of("trace", "abc", "tenant", "t1"),
                at));
  }

  @Test
  void requiredFieldsAreNamedWhenMissingOrBlank() {
    assertThatThrownBy(() -> OutboxMessage.of(null, "42", "OrderCreated", "{}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("OutboxMessage.aggregateType is required, got null");
    assertThatThrownBy(() -> OutboxMessage.of("order", " ", "OrderCreated", "{}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("OutboxMessage.aggregateId is required, got a blank string");
    assertThatThrownBy(() -> OutboxMessage.of("order", "42", "", "{}"))
        .hasMessage("OutboxMessage.eventType is required, got a blank string");
    assertThatThrownBy(() -> OutboxMessage.of("order", "42", "OrderCreated", null))
        .hasMessage("OutboxMessage.payload is required, got null");
    assertThatThrownBy(() -> OutboxMessage.builder().aggregate("order", "42").payload("{}").build())
        .hasMessage("OutboxMessage.eventType is required, got null");
    assertThatThrownBy(
            () ->
                OutboxMessage.builder()
                    .aggregate("order", "42")
                    .eventType("E")
                    .payload("{}")
                    .destination(" ")
                    .build())
        .hasMessageContaining("OutboxMessage.destination");
  }

  @Test
  void rejectsNullHeaderNamesAndValues() {
    Map<String, String> nullValue = new HashMap<>();
    nullValue.put("trace", null);
    assertThatThrownBy(
            () -> new OutboxMessage(null, "order", "42", "E", null, "{}", nullValue, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("OutboxMessage.headers['trace'] must not be null");
    Map<String, String> nullName = new HashMap<>();
    nullName.put(null, "x");
    assertThatThrownBy(
            () -> new OutboxMessage(null, "order", "42", "E", null, "{}", nullName, null))
        .hasMessage("OutboxMessage.headers must not have a null or empty name");
  }

  @Test
  void headersAreCopied() {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("a", "1");
    OutboxMessage message = new OutboxMessage(null, "order", "42", "E", null, "{}", headers, null);
    headers.put("b", "2");

    assertThat(message.headers()).containsOnlyKeys("a");
  }

  @Test
  void toStringNeverShowsThePayload() {
    OutboxMessage message = OutboxMessage.of("order", "42", "OrderCreated", "{\"card\":\"4111\"}");

    assertThat(message.toString())
        .doesNotContain("4111")
        .contains("payload=<15 chars>")
        .contains("OrderCreated");
  }

  @Test
  void aBinaryPayloadIsCopiedComparedByContentAndNeverShown() {
    byte[] bytes = {1, 2, 3};
    UUID id = UUID.randomUUID();
    OutboxMessage message =
        OutboxMessage.builder()
            .eventId(id)
            .aggregate("order", "42")
            .eventType("OrderCreated")
            .payload(bytes)
            .build();
    bytes[0] = 9;

    assertThat(message.binary()).isTrue();
    assertThat(message.payload()).isNull();
    assertThat(message.payloadBytes()).containsExactly(1, 2, 3);
    message.payloadBytes()[1] = 9;
    assertThat(message.payloadBytes()).containsExactly(1, 2, 3);
    OutboxMessage same =
        new OutboxMessage(
            id, "order", "42", "OrderCreated", null, null, null, null, new byte[] {1, 2, 3});
    assertThat(message).isEqualTo(same).hasSameHashCodeAs(same);
    assertThat(message.toString()).contains("payload=<3 bytes>").doesNotContain("[1, 2, 3]");
  }

  @Test
  void aMessageHasATextOrABinaryPayloadNotBoth() {
    assertThatThrownBy(
            () ->
                new OutboxMessage(
                    null, "order", "42", "OrderCreated", null, "{}", null, null, new byte[] {1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("OutboxMessage needs a payload or payloadBytes, got both");
    OutboxMessage text =
        OutboxMessage.builder()
            .aggregate("order", "42")
            .eventType("OrderCreated")
            .payload(new byte[] {1})
            .payload("{}")
            .build();
    assertThat(text.binary()).isFalse();
    assertThat(text.payload()).isEqualTo("{}");
  }
}
