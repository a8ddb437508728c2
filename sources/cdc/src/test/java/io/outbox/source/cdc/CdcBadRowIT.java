package io.outbox.source.cdc;

import static io.outbox.source.cdc.CdcFixture.event;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.admin.OutboxStatus;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Settlement.DeadLetterReason;
import io.outbox.testkit.Teardown;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The CDC source with bad rows and a dead-letter table that refuses the move, as the polling source
 * handles them: defects, kept dead letters.
 */
class CdcBadRowIT {
  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  @Test
  void rowsWithANullKeyOrHeadersThatAreNotJsonAreStreamedWithADefect() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_bad_rows"));
    for (String table : List.of("outbox", "outbox_dead_letter")) {
      fx.execute(
          "ALTER TABLE "
              + table
              + " ALTER COLUMN aggregate_id DROP NOT NULL, ALTER COLUMN headers DROP DEFAULT,"
              + " ALTER COLUMN headers TYPE text USING headers::text");
    }
    CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers) VALUES"
            + " ('order', NULL, 'Created', '{}', '{}'),"
            + " ('order', 'k', 'Created', '{}', '{\"a\": secret'),"
            + " ('order', 'good', 'Created', '{}', '{\"a\": \"b\"}')");

    List<Claim> claims = CdcFixture.claimAll(source, 1, 3, Duration.ofSeconds(30));
    List<OutboxEvent> events = claims.get(0).events();

    assertThat(events)
        .extracting(OutboxEvent::defect)
        .containsExactly(
            "aggregate_id is NULL", "headers are not a JSON object: not valid JSON", null);
    List<Settlement> settlements = new ArrayList<>();
    for (OutboxEvent e : events) {
      settlements.add(
          e.defect() == null
              ? new Settlement.Published(e)
              : new Settlement.DeadLetter(e, DeadLetterReason.PERMANENT, 1, e.defect()));
    }
    claims.get(0).settle(settlements);
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter WHERE reason = 'permanent'"))
        .isEqualTo(2);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL")).isEqualTo(1);
  }

  @Test
  void aDeadLetterTheTableRefusesIsKeptAsARetryAndTheBatchIsRecorded() throws Exception {
    fx = teardown.add(new CdcFixture("cdc_bad_move"));
    fx.execute(
        "ALTER TABLE outbox_dead_letter ADD CONSTRAINT no_permanent CHECK (reason <> 'permanent')");
    CdcSource source = fx.source(1, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    fx.commit(List.of(event("a", 1), event("poison", 1), event("b", 1)));

    List<Claim> claims = CdcFixture.claimAll(source, 1, 3, Duration.ofSeconds(30));
    List<OutboxEvent> e = claims.get(0).events();
    Settled settled =
        claims
            .get(0)
            .settle(
                List.of(
                    new Settlement.Published(e.get(0)),
                    new Settlement.DeadLetter(e.get(1), DeadLetterReason.PERMANENT, 1, "too big"),
                    new Settlement.Published(e.get(2))));

    assertThat(settled.deadLettersKept())
        .singleElement()
        .satisfies(r -> assertThat(r.error()).startsWith(OutboxStatus.MOVE_FAILED));
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL")).isEqualTo(2);
    assertThat(
            fx.count(
                "SELECT count(*) FROM outbox WHERE published_at IS NULL"
                    + " AND last_error LIKE 'dead-letter move failed: %'"
                    + " AND next_attempt_at > now() + interval '30 seconds'"))
        .isEqualTo(1);
    // The stream holds the poison as a retry (not final, not offered again before it is due).
    assertThat(source.inMemory()).isEqualTo(1);
    Claim next = source.claim(0, 100, Duration.ofMillis(500));
    assertThat(next.events()).isEmpty();
    next.release();
  }
}
