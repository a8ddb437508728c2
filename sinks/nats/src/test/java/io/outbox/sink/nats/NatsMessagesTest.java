package io.outbox.sink.nats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nats.client.Message;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.support.AsciiHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class NatsMessagesTest {

  @Test
  void theRelaysHeadersWinAndABadHeaderNameIsRefused() {
    UUID id = UUID.randomUUID();
    Message m =
        NatsMessages.toMessage(
            new RoutedEvent(
                event(id, Map.of("event-id", "forged", "tenant", "acmé")),
                "outbox.order",
                Map.of("x-extra", "e")));
    assertThat(m.getSubject()).isEqualTo("outbox.order");
    assertThat(new String(m.getData(), StandardCharsets.UTF_8)).isEqualTo("{}");
    assertThat(m.getHeaders().get("event-id")).containsExactly(id.toString());
    assertThat(m.getHeaders().getFirst("aggregate-id")).isEqualTo("o-1");
    assertThat(m.getHeaders().getFirst("content-type")).isEqualTo("application/json");
    assertThat(AsciiHeaders.decode(m.getHeaders().getFirst("tenant"))).isEqualTo("acmé");
    assertThat(m.getHeaders().getFirst("x-extra")).isEqualTo("e");

    assertThatThrownBy(
            () ->
                NatsMessages.toMessage(
                    new RoutedEvent(event(id, Map.of("bad name", "v")), "outbox.order")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'bad name'")
        .hasMessageContaining("NATS");
  }

  private static OutboxEvent event(UUID id, Map<String, String> headers) {
    return new OutboxEvent(
        1,
        id,
        "order",
        "o-1",
        "OrderCreated",
        null,
        "{}".getBytes(StandardCharsets.UTF_8),
        PayloadFormat.JSON,
        headers,
        Instant.parse("2024-05-01T10:15:30Z"),
        0);
  }
}
