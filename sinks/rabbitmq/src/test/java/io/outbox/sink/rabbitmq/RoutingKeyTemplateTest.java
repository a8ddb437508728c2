package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.support.EventTemplate;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The routing-key template is the shared {@link EventTemplate}. */
class RoutingKeyTemplateTest {

  @Test
  void replacesEveryVariableWithTheEventsValue() {
    var event = Events.event("o-1", "{}", Map.of());
    assertThat(EventTemplate.parse("${aggregate_type}.${event_type}").render(event))
        .isEqualTo("order.OrderCreated");
    assertThat(EventTemplate.parse("x.${aggregate_id}.${aggregate_id}!").render(event))
        .isEqualTo("x.o-1.o-1!");
  }

  @Test
  void literalAndEmptyTemplatesRenderAsWritten() {
    var event = Events.event("o-1", "{}", Map.of());
    assertThat(EventTemplate.parse("fixed.key").render(event)).isEqualTo("fixed.key");
    assertThat(EventTemplate.parse("").render(event)).isEmpty();
    assertThat(EventTemplate.parse("cost$5").render(event)).isEqualTo("cost$5");
  }

  @Test
  void unknownVariableIsRejectedNamingItAndTheKnownOnes() {
    assertThat(String.join("; ", EventTemplate.problems("${aggregate_type}.${tenant}")))
        .contains("unknown variable ${tenant}")
        .contains("${aggregate_type}, ${event_type}, ${aggregate_id}");
    assertThatThrownBy(() -> EventTemplate.parse("${eventType}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("${eventType}");
  }

  @Test
  void unterminatedVariableIsRejected() {
    assertThat(String.join("; ", EventTemplate.problems("${aggregate_type}.${event_type")))
        .contains("unterminated");
  }
}
