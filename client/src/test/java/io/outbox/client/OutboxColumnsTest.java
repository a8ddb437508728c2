package io.outbox.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class OutboxColumnsTest {

  @Test
  void anEmptyMappingIsTheRelaysOwnLayout() {
    assertThat(OutboxColumns.of(Map.of())).isEqualTo(OutboxColumns.DEFAULT);
    assertThat(OutboxColumns.DEFAULT.isDefault()).isTrue();
    assertThat(OutboxColumns.DEFAULT.aggregateId("o")).isEqualTo("o.\"aggregate_id\"");
  }

  @Test
  void debeziumsLayoutIsQuotedAndMappedBackToTheRelaysNames() {
    OutboxColumns c = OutboxColumns.of(OutboxColumns.DEBEZIUM.byKey());

    assertThat(c.isDefault()).isFalse();
    assertThat(c.eventId("o")).isEqualTo("o.\"id\"");
    assertThat(c.id("b")).isEqualTo("b.\"relay_id\"");
    assertThat(c.byRelayColumn())
        .containsExactly(
            Map.entry("id", "relay_id"),
            Map.entry("event_id", "id"),
            Map.entry("aggregate_type", "aggregatetype"),
            Map.entry("aggregate_id", "aggregateid"),
            Map.entry("event_type", "type"),
            Map.entry("payload", "payload"));
  }

  @Test
  void badNamesAndAColumnMappedTwiceAreRefusedNamingTheKeys() {
    assertThatThrownBy(
            () ->
                new OutboxColumns("id", "x;drop", "aggregate_type", "id", "event_type", "payload"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "columns.event-id: must be a column name (letters, digits and '_', not starting with"
                + " a digit), not \"x;drop\"; columns.aggregate-id: \"id\" is already the column"
                + " of columns.id");
  }
}
