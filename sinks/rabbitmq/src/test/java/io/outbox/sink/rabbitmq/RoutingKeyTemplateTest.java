package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class RoutingKeyTemplateTest {

  @Test
  void replacesEveryVariableWithTheEventsValue() {
    var event = Events.event("o-1", "{}", Map.of());
    assertThat(RoutingKeyTemplate.parse("${aggregate_type}.${event_type}").render(event))
        .isEqualTo("order.OrderCreated");
    assertThat(RoutingKeyTemplate.parse("x.${aggregate_id}.${aggregate_id}!").render(event))
        .isEqualTo("x.o-1.o-1!");
  }

  @Test
  void literalAndEmptyTemplatesRenderAsWritten() {
    var event = Events.event("o-1", "{}", Map.of());
    assertThat(RoutingKeyTemplate.parse("fixed.key").render(event)).isEqualTo("fixed.key");
    assertThat(RoutingKeyTemplate.parse("").render(event)).isEmpty();
    assertThat(RoutingKeyTemplate.parse("cost$5").render(event)).isEqualTo("cost$5");
  }

  @Test
  void unknownVariableIsRejectedNamingItAndTheKnownOnes() {
    assertThat(RoutingKeyTemplate.problem("${aggregate_type}.${tenant}"))
        .contains("unknown variable ${tenant}")
        .contains("${aggregate_type}, ${event_type}, ${aggregate_id}");
    assertThatThrownBy(() -> RoutingKeyTemplate.parse("${eventType}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("${eventType}");
  }

  @Test
  void unterminatedVariableIsRejected() {
    assertThat(RoutingKeyTemplate.problem("${aggregate_type}.${event_type"))
        .contains("unterminated");
  }
}
