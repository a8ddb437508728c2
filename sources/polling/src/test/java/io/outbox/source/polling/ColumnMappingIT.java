package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.client.OutboxColumns;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.DatabaseSettings.Retention;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Settlement.DeadLetterReason;
import io.outbox.relay.spi.SourceException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A table in Debezium's outbox layout ({@code id uuid}, {@code aggregatetype}, {@code aggregateid},
 * {@code type}, {@code payload}) with the relay's columns beside them, read through {@code
 * columns.*}: claimed, marked published and dead-lettered under its own names; a mapping that does
 * not fit the table is refused with one line per column.
 */
class ColumnMappingIT {

  static final Map<String, String> DEBEZIUM = OutboxColumns.DEBEZIUM.byKey();

  private PollingFixture fx;

  @BeforeEach
  void setUp() throws Exception {
    fx = PollingFixture.create("columns");
    // The migrated table renamed into Debezium's layout; the relay's own columns stay beside.
    fx.execute("ALTER TABLE outbox RENAME COLUMN id TO relay_id");
    fx.execute("ALTER TABLE outbox RENAME COLUMN event_id TO id");
    fx.execute("ALTER TABLE outbox RENAME COLUMN aggregate_type TO aggregatetype");
    fx.execute("ALTER TABLE outbox RENAME COLUMN aggregate_id TO aggregateid");
    fx.execute("ALTER TABLE outbox RENAME COLUMN event_type TO type");
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  private PollingSource source(int lanes, Map<String, String> columns) {
    return fx.source(
        lanes, OnPublish.MARK, Map.of(), new CopyOnWriteArrayList<>(), Retention.OFF, columns);
  }

  private UUID insert(String aggregateId, String type) throws Exception {
    UUID id = UUID.randomUUID();
    fx.execute(
        "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES ('"
            + id
            + "', 'order', '"
            + aggregateId
            + "', '"
            + type
            + "', '{\"n\": 1}')");
    return id;
  }

  @Test
  void claimsMarksAndDeadLettersUnderTheTablesOwnNames() throws Exception {
    PollingSource source = source(4, DEBEZIUM); // four lanes: the lane predicate uses the names
    source.activate();
    UUID first = insert("42", "OrderCreated");
    UUID poison = insert("43", "OrderShipped");

    Claim claim = source.claim(lane("42"), 10, Duration.ZERO);
    OutboxEvent event = claim.events().get(0);
    assertThat(event.eventId()).isEqualTo(first);
    assertThat(event.aggregateType()).isEqualTo("order");
    assertThat(event.aggregateId()).isEqualTo("42");
    assertThat(event.eventType()).isEqualTo("OrderCreated");
    assertThat(new String(event.payload(), java.nio.charset.StandardCharsets.UTF_8))
        .isEqualTo("{\"n\": 1}");
    assertThat(event.defect()).isNull();
    assertThat(claim.settle(List.of(new Settlement.Published(event)))).isEqualTo(Settled.AS_GIVEN);
    assertThat(fx.value("SELECT published_at IS NOT NULL FROM outbox WHERE id = ?", first))
        .isEqualTo(true);

    Claim other = source.claim(lane("43"), 10, Duration.ZERO);
    OutboxEvent dead = other.events().get(0);
    assertThat(dead.eventId()).isEqualTo(poison);
    other.settle(List.of(new Settlement.DeadLetter(dead, DeadLetterReason.PERMANENT, 1, "bad")));
    assertThat(
            fx.rows(
                "SELECT event_id, aggregate_type, aggregate_id, event_type FROM outbox_dead_letter"))
        .containsExactly(
            Map.of(
                "event_id", poison,
                "aggregate_type", "order",
                "aggregate_id", "43",
                "event_type", "OrderShipped"));
    assertThat(fx.value("SELECT count(*) FROM outbox WHERE id = ?", poison)).isEqualTo(0L);
  }

  @Test
  void aMappingThatDoesNotFitTheTableIsRefusedOneLinePerColumn() throws Exception {
    fx.execute("ALTER TABLE outbox ALTER COLUMN type TYPE integer USING 0");
    Map<String, String> wrong = new java.util.HashMap<>(DEBEZIUM);
    wrong.put("aggregate-id", "aggregate_key");
    PollingSource source = source(1, wrong);

    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessage(
            "table public.outbox lacks the column aggregate_key (columns.aggregate-id)\n"
                + "column public.outbox.type (columns.event-type) has type integer; the relay"
                + " reads text, character varying, character");
  }

  @Test
  void theRelaysOwnLayoutIsRefusedUnderTheDefaultNames() throws Exception {
    PollingSource source = fx.source(1); // no mapping: the renamed columns are missing

    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("column public.outbox.id has type uuid")
        .hasMessageContaining(
            "table public.outbox lacks the column event_type (columns.event-type)");
  }

  private static int lane(String aggregateId) {
    return io.outbox.relay.spi.LaneFunction.lane("order", aggregateId, 4);
  }
}
