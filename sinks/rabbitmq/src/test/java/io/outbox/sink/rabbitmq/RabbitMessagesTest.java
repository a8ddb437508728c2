package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import java.util.Date;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RabbitMessagesTest {

  @Test
  void propertiesCarryIdTypeTimestampPersistenceAndContentType() {
    OutboxEvent event = Events.event("o-1", "{}", Map.of());
    AMQP.BasicProperties p = RabbitMessages.properties(new RoutedEvent(event, "outbox.order"));
    assertThat(p.getMessageId()).isEqualTo(event.eventId().toString());
    assertThat(p.getType()).isEqualTo("OrderCreated");
    assertThat(p.getTimestamp()).isEqualTo(Date.from(Events.CREATED_AT));
    assertThat(p.getDeliveryMode()).isEqualTo(2);
    assertThat(p.getContentType()).isEqualTo("application/json");
  }

  @Test
  void contentTypeFollowsThePayloadColumn() {
    OutboxEvent json = Events.event("o-1", "x", Map.of());
    OutboxEvent text =
        new OutboxEvent(
            1,
            UUID.randomUUID(),
            "order",
            "o-1",
            "T",
            null,
            new byte[] {1},
            PayloadFormat.TEXT,
            Map.of(),
            Events.CREATED_AT,
            0);
    OutboxEvent binary =
        new OutboxEvent(
            2,
            UUID.randomUUID(),
            "order",
            "o-1",
            "T",
            null,
            new byte[] {1},
            PayloadFormat.BINARY,
            Map.of(),
            Events.CREATED_AT,
            0);
    assertThat(RabbitMessages.properties(new RoutedEvent(json, "x")).getContentType())
        .isEqualTo("application/json");
    assertThat(RabbitMessages.properties(new RoutedEvent(text, "x")).getContentType())
        .isEqualTo("text/plain; charset=utf-8");
    assertThat(RabbitMessages.properties(new RoutedEvent(binary, "x")).getContentType())
        .isEqualTo("application/octet-stream");
  }

  @Test
  void headersAreTheRelaysFiveThenExtraThenTheRowsAndTheRelaysWin() {
    OutboxEvent event =
        Events.event(
            "o-1", "{}", Map.of("trace-id", "t-1", "event-id", "spoofed", "x-extra", "from-row"));
    RoutedEvent routed =
        new RoutedEvent(event, "outbox.order", Map.of("x-extra", "from-pipeline", "b", "2"));
    Map<String, Object> headers = RabbitMessages.headers(routed);
    assertThat(headers)
        .containsExactly(
            Map.entry("event-id", event.eventId().toString()),
            Map.entry("event-type", "OrderCreated"),
            Map.entry("aggregate-type", "order"),
            Map.entry("aggregate-id", "o-1"),
            Map.entry("created-at", "2024-05-01T10:15:30.123456Z"),
            Map.entry("b", "2"),
            Map.entry("x-extra", "from-pipeline"),
            Map.entry("trace-id", "t-1"));
  }

  @Test
  void namesLongerThanAnAmqpShortStringAreAProblem() {
    RoutedEvent ok = Events.routed("outbox.order", "o-1", "{}");
    assertThat(RabbitMessages.problem("outbox.order", "order.OrderCreated", ok, -1)).isNull();
    String tooLong = "k".repeat(256);
    assertThat(RabbitMessages.problem("outbox.order", tooLong, ok, -1))
        .contains("routing key of 256 bytes");
    assertThat(RabbitMessages.problem(tooLong, "k", ok, -1)).contains("exchange name of 256 bytes");
    RoutedEvent badHeader =
        new RoutedEvent(Events.event("o-1", "{}", Map.of(tooLong, "v")), "outbox.order");
    assertThat(RabbitMessages.problem("outbox.order", "k", badHeader, -1))
        .contains("header name of 256 bytes");
  }

  @Test
  void aBodyOverTheBrokersKnownMaxMessageSizeIsAProblem() {
    RoutedEvent fits = Events.routed("outbox.order", "o-1", "x".repeat(100));
    RoutedEvent over = Events.routed("outbox.order", "o-1", "x".repeat(101));

    assertThat(RabbitMessages.problem("outbox.order", "k", over, -1)).as("limit unknown").isNull();
    assertThat(RabbitMessages.problem("outbox.order", "k", fits, 100)).isNull();
    assertThat(RabbitMessages.problem("outbox.order", "k", over, 100))
        .isEqualTo(
            "exchange 'outbox.order': message body of 101 bytes is larger than RabbitMQ's"
                + " max_message_size of 100 bytes");
  }
}
