package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.OutboxEvent;
import org.junit.jupiter.api.Test;

class RouterTest {

  @Test
  void fillsEveryVariable() {
    Router router = Router.compile("x.${aggregate_type}.${event_type}.${aggregate_id}");
    assertThat(router.route(Events.event(1, "42"))).isEqualTo("x.order.OrderCreated.42");
  }

  @Test
  void rowDestinationWins() {
    OutboxEvent e = Events.event(1, "42");
    OutboxEvent routed =
        new OutboxEvent(
            e.id(),
            e.eventId(),
            e.aggregateType(),
            e.aggregateId(),
            e.eventType(),
            "explicit.topic",
            e.payload(),
            e.payloadFormat(),
            e.headers(),
            e.createdAt(),
            0);
    assertThat(Router.compile("outbox.${aggregate_type}").route(routed))
        .isEqualTo("explicit.topic");
  }

  @Test
  void blankResultIsNoDestination() {
    assertThat(Router.compile("   ").route(Events.event(1, "a"))).isNull();
  }

  @Test
  void rejectsUnknownVariableNamingIt() {
    assertThatThrownBy(() -> Router.compile("outbox.${aggregate}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("${aggregate}")
        .hasMessageContaining("outbox.${aggregate}");
  }
}
