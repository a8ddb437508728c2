package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Settlement.DeadLetterReason;
import io.outbox.relay.spi.SourceException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Bad rows in tables made by hand (nullable key and payload, headers in a text column) never stall
 * a lane: the claim returns them with a defect, which the pipeline dead-letters as permanent (here
 * settled as the pipeline does), and the lane's other rows flow. A column of a type the claim
 * cannot read stops the start, naming it.
 */
class BadRowIT {

  private PollingFixture fx;

  @BeforeEach
  void setUp() throws Exception {
    fx = PollingFixture.create("bad_rows");
    for (String table : List.of("outbox", "outbox_dead_letter")) {
      fx.execute(
          "ALTER TABLE "
              + table
              + " ALTER COLUMN aggregate_id DROP NOT NULL, ALTER COLUMN payload DROP NOT NULL,"
              + " ALTER COLUMN headers DROP DEFAULT,"
              + " ALTER COLUMN headers TYPE text USING headers::text");
    }
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void aNullAggregateIdFallsIntoALaneAndIsDeadLetteredWhileOtherKeysFlow() throws Exception {
    long bad = insert(null, "{\"n\": 1}", "{}");
    List<Long> good = insertGood();
    PollingSource source = fx.activeSource(2, OnPublish.MARK);

    List<OutboxEvent> claimed = drainAsThePipeline(source, 2);

    assertOutcome(claimed, bad, good, "aggregate_id is NULL");
  }

  @Test
  void aNullPayloadIsDeadLetteredWhileTheLaneFlows() throws Exception {
    long bad = insert("k0", null, "{}");
    List<Long> good = insertGood();
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    List<OutboxEvent> claimed = drainAsThePipeline(source, 1);

    assertOutcome(claimed, bad, good, "payload is NULL");
  }

  @Test
  void headersThatAreNotJsonAreDeadLetteredWhileTheLaneFlows() throws Exception {
    long bad = insert("k0", "{\"n\": 1}", "{\"secret\": unquoted");
    long array = insert("k9", "{\"n\": 1}", "[1, 2]"); // JSON, not an object: no headers
    List<Long> good = insertGood();
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    List<OutboxEvent> claimed = drainAsThePipeline(source, 1);

    List<Long> flowing = new ArrayList<>(good);
    flowing.add(array);
    assertOutcome(claimed, bad, flowing, "headers are not a JSON object: not valid JSON (at ");
    String error = (String) fx.value("SELECT last_error FROM outbox_dead_letter WHERE id = ?", bad);
    assertThat(error).doesNotContain("unquoted"); // the message never quotes the column's text
    assertThat(fx.value("SELECT headers FROM outbox_dead_letter WHERE id = ?", bad))
        .isEqualTo("{\"secret\": unquoted"); // moved as it was
  }

  @Test
  void aColumnOfATypeTheClaimCannotReadStopsTheStartNamingIt() throws Exception {
    fx.execute("ALTER TABLE outbox ALTER COLUMN created_at TYPE text");
    PollingSource source = fx.source(1);

    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessage(
            "column public.outbox.created_at has type text; the relay reads timestamp with time"
                + " zone");
  }

  /** The bad row has the defect and was dead-lettered as permanent; every good row published. */
  private void assertOutcome(List<OutboxEvent> claimed, long bad, List<Long> good, String defect)
      throws SQLException {
    assertThat(claimed)
        .filteredOn(e -> e.id() == bad)
        .singleElement()
        .satisfies(e -> assertThat(e.defect()).startsWith(defect));
    assertThat(claimed).filteredOn(e -> e.id() != bad).allMatch(e -> e.defect() == null);
    Map<String, Object> dead =
        fx.rows("SELECT reason, last_error FROM outbox_dead_letter WHERE id = ?", bad).get(0);
    assertThat(dead.get("reason")).isEqualTo("permanent");
    assertThat((String) dead.get("last_error")).startsWith(defect);
    assertThat(fx.column("SELECT id FROM outbox WHERE published_at IS NOT NULL ORDER BY id"))
        .containsExactlyInAnyOrderElementsOf(good);
    assertThat(fx.value("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isEqualTo(0L);
  }

  /** Good rows of several keys, written after the bad one. */
  private List<Long> insertGood() throws SQLException {
    List<Long> ids = new ArrayList<>();
    for (int i = 1; i <= 6; i++) {
      ids.add(insert("k" + i, "{\"n\": " + i + "}", "{\"h\": \"v\"}"));
    }
    return ids;
  }

  /**
   * Claims every lane until it returns nothing, settling each claim as the pipeline does: an event
   * with a defect dead-lettered as permanent with the defect as its error, the others published.
   */
  private static List<OutboxEvent> drainAsThePipeline(PollingSource source, int lanes)
      throws InterruptedException {
    List<OutboxEvent> claimed = new ArrayList<>();
    for (int lane = 0; lane < lanes; lane++) {
      while (true) {
        Claim claim = source.claim(lane, 100, Duration.ofMillis(500));
        if (claim.events().isEmpty()) {
          claim.release();
          break;
        }
        List<Settlement> settlements = new ArrayList<>();
        for (OutboxEvent e : claim.events()) {
          claimed.add(e);
          settlements.add(
              e.defect() == null
                  ? new Settlement.Published(e)
                  : new Settlement.DeadLetter(
                      e, DeadLetterReason.PERMANENT, e.attempts() + 1, e.defect()));
        }
        claim.settle(settlements);
      }
    }
    return claimed;
  }

  private long insert(String aggregateId, String payload, String headers) throws SQLException {
    try (PreparedStatement ps =
        fx.sql()
            .prepareStatement(
                "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)"
                    + " VALUES ('order', ?, 'Created', ?::jsonb, ?) RETURNING id")) {
      ps.setString(1, aggregateId);
      ps.setString(2, payload);
      ps.setString(3, headers);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
