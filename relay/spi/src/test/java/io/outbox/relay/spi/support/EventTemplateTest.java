package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class EventTemplateTest {
  private static final OutboxEvent EVENT =
      new OutboxEvent(
          1,
          UUID.randomUUID(),
          "order",
          "42",
          "OrderCreated",
          null,
          new byte[0],
          PayloadFormat.JSON,
          Map.of(),
          Instant.EPOCH,
          0);

  @Test
  void fillsEveryVariable() {
    EventTemplate t = EventTemplate.parse("x.${aggregate_type}.${event_type}.${aggregate_id}!");
    assertThat(t.render(EVENT)).isEqualTo("x.order.OrderCreated.42!");
    assertThat(t.isConstant()).isFalse();
  }

  @Test
  void aTemplateWithoutVariablesIsConstant() {
    EventTemplate t = EventTemplate.parse("orders");
    assertThat(t.isConstant()).isTrue();
    assertThat(t.render(EVENT)).isEqualTo("orders");
  }

  @Test
  void listsEveryMistakeNamingTheTemplate() {
    assertThat(EventTemplate.problems("${tenant}.${aggregate}.${event_type"))
        .containsExactly(
            "unknown variable ${tenant} in \"${tenant}.${aggregate}.${event_type\"; known:"
                + " ${aggregate_type}, ${event_type}, ${aggregate_id}",
            "unknown variable ${aggregate} in \"${tenant}.${aggregate}.${event_type\"; known:"
                + " ${aggregate_type}, ${event_type}, ${aggregate_id}",
            "unterminated variable in \"${tenant}.${aggregate}.${event_type\" (a ${ without its"
                + " closing })");
    assertThat(EventTemplate.problems("outbox.${aggregate_type}")).isEmpty();
    assertThatThrownBy(() -> EventTemplate.parse("a.${nope}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown variable ${nope}");
  }
}
