package io.outbox.source.polling;

import static io.outbox.source.polling.PollingFixture.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.admin.DeadLetterFilter;
import io.outbox.admin.DeadLetterTable;
import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.SourceException;
import io.outbox.source.postgres.LanePositions;
import io.outbox.source.postgres.Retention;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The polling source settling by position ({@code on-publish = position}), against PostgreSQL: what
 * it writes and what it does not, a held key, the claim made ahead, a settlement that never
 * commits, and a pipeline changing its lane count or leaving settlement by position.
 */
class PositionSourceIT {

  private PollingFixture fx;

  @BeforeEach
  void setUp() throws Exception {
    fx = PollingFixture.createByPosition("position_source");
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void aPublishedRowGetsNoWriteAndNeverComesBack() throws Exception {
    long pendingAtTheSwitch = fx.insert("order", "1");
    PollingSource source = fx.activeSource(1, OnPublish.POSITION);
    List<Long> ids = List.of(pendingAtTheSwitch, fx.insert("order", "2"));
    List<Object> versions = fx.column("SELECT xmin::text FROM outbox ORDER BY id");

    assertThat(pending()).as("status, before the claim").isEqualTo(2);
    Claim claim = source.claim(0, 10, Duration.ofSeconds(5));
    assertThat(ids(claim)).isEqualTo(ids);
    claim.settle(published(claim));
    assertThat(pending()).as("status, once the position passed them").isZero();

    assertThat(fx.column("SELECT xmin::text FROM outbox ORDER BY id"))
        .as("no row version changed, not even the row pending at the switch: nothing was written")
        .isEqualTo(versions);
    assertThat(fx.value("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isEqualTo(2L);
    assertThat(source.claim(0, 10, Duration.ofMillis(300)).events()).isEmpty();
    source.close(Duration.ofSeconds(5));
    PollingSource next = fx.activeSource(1, OnPublish.POSITION);
    assertThat(next.claim(0, 10, Duration.ofMillis(300)).events()).as("after a restart").isEmpty();
  }

  @Test
  void aHeldKeysLaterRowsWaitAsExceptionsWhileOtherKeysFlowPastThem() throws Exception {
    PollingSource source = fx.activeSource(1, OnPublish.POSITION);
    long a1 = fx.insert("order", "A");
    Claim first = source.claim(0, 10, Duration.ofSeconds(5));
    first.settle(
        List.of(new Settlement.Retry(first.events().get(0), 1, Duration.ofSeconds(2), "not now")));
    List<Long> heldBack = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      heldBack.add(fx.insert("order", "A"));
    }
    long b1 = fx.insert("order", "B");

    Claim next = source.claim(0, 10, Duration.ofSeconds(5));
    assertThat(ids(next))
        .as("B's row, behind 25 held rows of A, comes in the first claim of limit 10")
        .containsExactly(b1);
    next.settle(published(next));
    assertThat(
            fx.value(
                "SELECT count(*) FROM outbox WHERE next_attempt_at IS NOT NULL AND id > ?", a1))
        .as("A's later rows became exceptions")
        .isEqualTo(25L);

    List<Long> afterDue = new ArrayList<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (afterDue.size() < 26 && System.nanoTime() < deadline) {
      Claim c = source.claim(0, 10, Duration.ofMillis(500));
      afterDue.addAll(ids(c));
      c.settle(published(c));
    }
    List<Long> expected = new ArrayList<>(List.of(a1));
    expected.addAll(heldBack);
    assertThat(afterDue).as("A's rows once its retry is due, in order").isEqualTo(expected);
    assertThat(source.claim(0, 10, Duration.ofMillis(300)).events()).isEmpty();
  }

  @Test
  void aClaimAheadStartsWhereTheClaimInFlightEndsAndCannotSettleBeforeIt() throws Exception {
    PollingSource source = fx.activeSource(1, OnPublish.POSITION);
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      ids.add(fx.insert("order", "k" + i));
    }
    Claim inFlight = source.claim(0, 3, Duration.ofSeconds(5));
    Claim ahead = source.claimAhead(0, 3, inFlight);
    assertThat(ids(inFlight)).isEqualTo(ids.subList(0, 3));
    assertThat(ids(ahead)).isEqualTo(ids.subList(3, 6));

    assertThatThrownBy(() -> ahead.settle(published(ahead)))
        .as("settled before the claim it follows: the lane's position is not where it starts")
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("no longer the one this claim was made from");
    inFlight.settle(published(inFlight));

    Claim again = source.claim(0, 10, Duration.ofSeconds(5));
    assertThat(ids(again)).as("the refused claim's rows come again").isEqualTo(ids.subList(3, 6));
    Claim aheadOfAgain = source.claimAhead(0, 10, again);
    assertThat(aheadOfAgain.events()).isEmpty();
    aheadOfAgain.release();
    again.settle(published(again));
    assertThat(source.claim(0, 10, Duration.ofMillis(300)).events()).isEmpty();
  }

  @Test
  void aSettlementThatNeverCommitsLeavesItsRowsToBeClaimedAgain() throws Exception {
    PollingSource source = fx.activeSource(1, OnPublish.POSITION);
    List<Long> ids = List.of(fx.insert("order", "1"), fx.insert("order", "2"));
    Claim claim = source.claim(0, 10, Duration.ofSeconds(5));
    assertThat(fx.terminate("claims", "idle in transaction"))
        .as("the claim's session ended, as when the relay dies before settling")
        .isEqualTo(1);

    assertThatThrownBy(() -> claim.settle(published(claim))).isInstanceOf(SourceException.class);

    Claim again = source.claim(0, 10, Duration.ofSeconds(5));
    assertThat(ids(again)).isEqualTo(ids);
    again.settle(published(again));
    assertThat(source.claim(0, 10, Duration.ofMillis(300)).events()).isEmpty();
  }

  @Test
  void aDeadLetterReplayedComesAgainInALaterWindow() throws Exception {
    PollingSource source = fx.activeSource(1, OnPublish.POSITION);
    long poison = fx.insert("order", "p");
    Claim claim = source.claim(0, 10, Duration.ofSeconds(5));
    claim.settle(
        List.of(
            new Settlement.DeadLetter(
                claim.events().get(0), Settlement.DeadLetterReason.PERMANENT, 1, "refused")));
    assertThat(fx.value("SELECT count(*) FROM outbox WHERE id = ?", poison)).isEqualTo(0L);
    assertThat(source.claim(0, 10, Duration.ofMillis(300)).events()).isEmpty();

    try (Connection c = fx.db.connect()) {
      assertThat(
              DeadLetterTable.of(OutboxTables.of("outbox", "outbox_dead_letter"))
                  .replay(c, DeadLetterFilter.all(PollingFixture.PIPELINE), false)
                  .replayed())
          .isEqualTo(1);
    }
    Claim again = source.claim(0, 10, Duration.ofSeconds(5));
    assertThat(again.events())
        .singleElement()
        .satisfies(e -> assertThat(e.aggregateId()).isEqualTo("p"));
    again.settle(published(again));
    assertThat(pending()).isZero();
  }

  @Test
  void aNewLaneCountRepeatsNothingAndLosesNothing() throws Exception {
    PollingSource two = fx.activeSource(2, OnPublish.POSITION);
    for (int k = 0; k < 10; k++) {
      fx.insert("order", "k" + k);
    }
    assertThat(drain(two, 2)).hasSize(10);
    List<Long> later = new ArrayList<>();
    for (int k = 0; k < 10; k++) {
      later.add(fx.insert("order", "k" + k));
    }
    two.close(Duration.ofSeconds(5));

    PollingSource three = fx.activeSource(3, OnPublish.POSITION);
    assertThat(fx.value("SELECT count(*) FROM outbox_relay_position")).isEqualTo(3L);
    assertThat(drain(three, 3)).containsExactlyInAnyOrderElementsOf(later);
  }

  @Test
  void leavingSettlementByPositionMarksWhatItSettledAndRepublishesNothing() throws Exception {
    PollingSource byPosition = fx.activeSource(1, OnPublish.POSITION);
    List<Long> published = List.of(fx.insert("order", "1"), fx.insert("order", "2"));
    assertThat(drain(byPosition, 1)).isEqualTo(published);
    long pending = fx.insert("order", "3");
    byPosition.close(Duration.ofSeconds(5));

    PollingSource marking = fx.activeSource(1, OnPublish.MARK);
    assertThat(fx.value("SELECT count(*) FROM outbox_relay_position")).isEqualTo(0L);
    assertThat(fx.column("SELECT id FROM outbox WHERE published_at IS NOT NULL ORDER BY id"))
        .isEqualTo(List.copyOf(published));
    assertThat(drain(marking, 1)).containsExactly(pending);
  }

  @Test
  void withoutTheIndexOnTxActivationSaysToRunMigrate() throws Exception {
    fx.execute("DROP INDEX outbox_tx_idx");
    PollingSource source = fx.source(1, OnPublish.POSITION, Map.of(), new CopyOnWriteArrayList<>());
    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("needs an index on \"public\".\"outbox\" (tx)")
        .hasMessageContaining("run outbox-relay migrate");
  }

  @Test
  void aLaneWithoutRowsMovesOnSoRetentionDeletesWhatTheOtherPublished() throws Exception {
    PollingSource source = fx.activeSource(2, OnPublish.POSITION);
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      ids.add(fx.insert("order", "only")); // one key: one lane has every row, the other none
    }
    assertThat(drain(source, 2)).isEqualTo(ids);
    long until = System.nanoTime() + Duration.ofMillis(2500).toNanos();
    while (System.nanoTime() < until) {
      for (int lane = 0; lane < 2; lane++) {
        assertThat(source.claim(lane, 10, Duration.ofMillis(100)).events()).isEmpty();
      }
    }
    try (Connection c = fx.db.connect()) {
      assertThat(
              Retention.of(OutboxTables.of("outbox", "outbox_dead_letter"))
                  .deleteSettledByPosition(c, PollingFixture.PIPELINE, Duration.ofMillis(1), 100))
          .as("both lanes' settled snapshots are past the rows")
          .isEqualTo(5);
    }
    assertThat(pending()).isZero();
  }

  @Test
  void statusReadsTheLanesPositionsOnceNotOncePerRow() throws Exception {
    fx.execute(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
            + " SELECT 'order', 'k' || (i % 100), 'Created', '{}' FROM generate_series(1, 2000) i");
    PollingSource source = fx.activeSource(4, OnPublish.POSITION);
    Claim claim = source.claim(0, 100, Duration.ofSeconds(5));
    claim.settle(published(claim));
    assertThat(pending()).isEqualTo(2000L - claim.events().size());

    String xmin =
        (String)
            fx.value(
                "SELECT min(pg_snapshot_xmin(settled))::text FROM outbox_relay_position"
                    + " WHERE pipeline = ?",
                PollingFixture.PIPELINE);
    String plan;
    try (Connection c = fx.db.connect();
        PreparedStatement ps =
            c.prepareStatement("EXPLAIN (ANALYZE) " + status().positionedBacklogSql())) {
      ps.setString(1, PollingFixture.PIPELINE);
      ps.setString(2, xmin);
      ps.setString(3, PollingFixture.PIPELINE);
      ps.setString(4, PollingFixture.PIPELINE);
      List<String> lines = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          lines.add(rs.getString(1));
        }
      }
      plan = String.join("\n", lines);
    }
    assertThat(plan)
        .as("the positions are read once, joined with the rows: %s", plan)
        .contains("on outbox_relay_position q")
        .doesNotContainPattern("on outbox_relay_position q .*loops=[1-9][0-9]");
  }

  private static OutboxStatus status() {
    OutboxTables tables = OutboxTables.of("outbox", "outbox_dead_letter");
    return LanePositions.status(tables);
  }

  /** The pending rows as {@code status} and the pending gauge count them. */
  private long pending() throws Exception {
    try (Connection c = fx.db.connect()) {
      return status().backlog(c, PollingFixture.PIPELINE).pending();
    }
  }

  /** Claims and publishes every lane until a round finds nothing; the ids published. */
  private static List<Long> drain(PollingSource source, int lanes) throws Exception {
    List<Long> ids = new ArrayList<>();
    boolean found = true;
    while (found) {
      found = false;
      for (int lane = 0; lane < lanes; lane++) {
        Claim c = source.claim(lane, 10, Duration.ofMillis(300));
        if (!c.events().isEmpty()) {
          found = true;
          ids.addAll(ids(c));
          c.settle(published(c));
        }
      }
    }
    return ids;
  }

  private static List<Settlement> published(Claim claim) {
    List<Settlement> settlements = new ArrayList<>();
    for (OutboxEvent e : claim.events()) {
      settlements.add(new Settlement.Published(e));
    }
    return settlements;
  }
}
