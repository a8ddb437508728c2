package io.outbox.source.polling;

import static io.outbox.source.polling.PollingFixture.ids;
import static io.outbox.source.polling.PollingFixture.insert;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

class ClaimIT {

  private PollingFixture fx;

  @BeforeEach
  void setUp(TestInfo test) throws Exception {
    fx = PollingFixture.create("claim");
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void claimsCommittedRowsInIdOrderWithTheirColumns() throws Exception {
    long first =
        insert(fx.sql(), "order", "1", "{\"total\": 12.5}", "{\"trace\": \"t-1\", \"n\": 7}", 0);
    long second = fx.insert("order", "2");
    long third = fx.insert("invoice", "1");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    Claim claim = source.claim(0, 10, Duration.ZERO);

    assertThat(ids(claim)).containsExactly(first, second, third);
    OutboxEvent event = claim.events().get(0);
    assertThat(event.aggregateType()).isEqualTo("order");
    assertThat(event.aggregateId()).isEqualTo("1");
    assertThat(event.eventType()).isEqualTo("Created");
    assertThat(event.payloadFormat()).isEqualTo(PayloadFormat.JSON);
    assertThat(new String(event.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"total\": 12.5}");
    assertThat(event.headers())
        .containsExactlyInAnyOrderEntriesOf(Map.of("trace", "t-1", "n", "7"));
    assertThat(event.eventId())
        .isEqualTo(fx.value("SELECT event_id FROM outbox WHERE id = ?", first));
    assertThat(event.attempts()).isZero();
    claim.release();
  }

  @Test
  void headersReadAsTheDatabaseTakesThemApart() throws Exception {
    String headers =
        "{\"a\": {\"b\": [1, 2.50]}, \"c\": null, \"d\": true, \"e\": 12.50,"
            + " \"s\": \"x\\\"y\u00e9\", \"arr\": [\"p\", {\"q\": null}], \"t\": \"\"}";
    long id = insert(fx.sql(), "order", "1", "{}", headers, 0);
    Map<String, String> expected = new HashMap<>();
    try (var st = fx.sql().createStatement();
        var rs =
            st.executeQuery(
                "SELECT key, value FROM outbox, jsonb_each_text(headers)"
                    + " WHERE value IS NOT NULL AND id = "
                    + id)) {
      while (rs.next()) {
        expected.put(rs.getString(1), rs.getString(2));
      }
    }
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    Claim claim = source.claim(0, 10, Duration.ZERO);

    assertThat(expected).hasSize(6);
    assertThat(claim.events().get(0).headers()).isEqualTo(expected);
    claim.release();
  }

  @Test
  void claimsAtMostMaxEvents() throws Exception {
    for (int i = 0; i < 5; i++) {
      fx.insert("order", Integer.toString(i));
    }
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    Claim claim = source.claim(0, 3, Duration.ZERO);

    assertThat(claim.events()).hasSize(3);
    claim.release();
  }

  @Test
  void neverClaimsRolledBackRows() throws Exception {
    try (Connection app = fx.db.connect()) {
      app.setAutoCommit(false);
      insert(app, "order", "1", "{}", "{}", 0);
      app.rollback();
    }
    long committed = fx.insert("order", "2");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    Claim claim = source.claim(0, 10, Duration.ZERO);

    assertThat(ids(claim)).containsExactly(committed);
    claim.release();
  }

  @Test
  void claimsARowThatCommitsLateWithASmallerIdThanPublishedRows() throws Exception {
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    try (Connection slow = fx.db.connect()) {
      slow.setAutoCommit(false);
      long early = insert(slow, "order", "slow", "{}", "{}", 0); // takes the smaller id
      long later = fx.insert("order", "fast");
      assertThat(early).isLessThan(later);

      // The uncommitted row is neither returned nor blocking.
      Claim claim = source.claim(0, 10, Duration.ZERO);
      assertThat(ids(claim)).containsExactly(later);
      claim.settle(List.of(new Settlement.Published(claim.events().get(0))));

      slow.commit();

      Claim late = source.claim(0, 10, Duration.ofSeconds(2));
      assertThat(ids(late)).containsExactly(early);
      late.release();
    }
  }

  @Test
  void aRowLockedByTheApplicationHoldsBackItsKeyInsteadOfBeingSkipped() throws Exception {
    long first = fx.insert("order", "k");
    long second = fx.insert("order", "k");
    PollingSource source =
        fx.source(
            1, OnPublish.MARK, Map.of("statement-timeout", "1s"), new CopyOnWriteArrayList<>());
    source.activate();
    try (Connection app = fx.db.connect()) {
      app.setAutoCommit(false);
      try (var st = app.prepareStatement("SELECT 1 FROM outbox WHERE id = ? FOR UPDATE")) {
        st.setLong(1, first);
        st.executeQuery().close();
      }
      // Skipping the locked row would hand out the key's second event first.
      assertThatThrownBy(() -> source.claim(0, 10, Duration.ZERO))
          .isInstanceOf(io.outbox.relay.spi.SourceException.class);
      app.rollback();
    }
    Claim claim = source.claim(0, 10, Duration.ZERO);
    assertThat(ids(claim)).containsExactly(first, second);
    claim.release();
  }

  @Test
  void aClaimedRowIsNotClaimedAgainUntilItsClaimEnds() throws Exception {
    long id = fx.insert("order", "1");
    PollingSource source = fx.activeSource(2, OnPublish.MARK);
    int lane = laneOf(source, id);

    Claim claim = source.claim(lane, 10, Duration.ZERO);
    assertThat(ids(claim)).containsExactly(id);
    // The same lane cannot be claimed twice; the other lane never sees the row.
    assertThat(source.claim(1 - lane, 10, Duration.ZERO).events()).isEmpty();
    claim.release();

    Claim again = source.claim(lane, 10, Duration.ZERO);
    assertThat(ids(again)).containsExactly(id);
    again.release();
  }

  @Test
  void aClaimMadeAheadTakesTheLanesNextRowsWithoutWaitingForTheClaimInFlight() throws Exception {
    List<Long> inserted = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      inserted.add(fx.insert("order", "k" + (i % 2))); // later rows of the same keys too
    }
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    Claim inFlight = source.claim(0, 2, Duration.ZERO);
    assertThat(ids(inFlight)).containsExactlyElementsOf(inserted.subList(0, 2));
    // Not blocked by the locks of the claim in flight: returns the rows after it, at once.
    long started = System.nanoTime();
    Claim ahead = source.claimAhead(0, 2, inFlight);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
    assertThat(ids(ahead)).containsExactlyElementsOf(inserted.subList(2, 4));
    // One claim ahead at a time, and a plain claim of the lane still has to wait its turn.
    assertThatThrownBy(() -> source.claimAhead(0, 2, inFlight))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already has a claim made ahead");
    assertThatThrownBy(() -> source.claim(0, 2, Duration.ZERO))
        .isInstanceOf(IllegalStateException.class);

    inFlight.settle(
        inFlight.events().stream().map(e -> (Settlement) new Settlement.Published(e)).toList());
    // The claim ahead is now the lane's claim in flight; the next one goes after it.
    Claim third = source.claimAhead(0, 10, ahead);
    assertThat(ids(third)).containsExactly(inserted.get(4));
    third.release();
    ahead.release();
    assertThat(ids(source.claim(0, 10, Duration.ZERO)))
        .containsExactlyElementsOf(inserted.subList(2, 5));
  }

  @Test
  void aClaimMadeAheadHoldsBackAKeyWaitingForARetry() throws Exception {
    long first = fx.insert("order", "a");
    long retrying = fx.insert("order", "b");
    long heldBack = fx.insert("order", "b");
    long other = fx.insert("order", "c");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    Claim inFlight = source.claim(0, 1, Duration.ZERO);
    assertThat(ids(inFlight)).containsExactly(first);
    try (Connection c = fx.db.connect()) {
      c.createStatement()
          .execute(
              "UPDATE outbox SET attempts = 1, next_attempt_at = now() + interval '1 hour'"
                  + " WHERE id = "
                  + retrying);
    }
    Claim ahead = source.claimAhead(0, 10, inFlight);
    assertThat(ids(ahead)).containsExactly(other).doesNotContain(heldBack);
    ahead.release();
    inFlight.release();
  }

  @Test
  void lanesPartitionKeysAndAKeyAlwaysMapsToTheSameLane() throws Exception {
    int lanes = 4;
    PollingSource source = fx.activeSource(lanes, OnPublish.MARK);
    Map<String, Integer> laneOfKey = new HashMap<>();
    Set<Long> inserted = new HashSet<>();
    for (int round = 0; round < 3; round++) {
      for (int key = 0; key < 40; key++) {
        inserted.add(fx.insert(key % 2 == 0 ? "order" : "invoice", "k" + key));
      }
      // All lanes hold their claims at the same time: no event, and no key, in two of them.
      List<Claim> claims = new ArrayList<>();
      for (int lane = 0; lane < lanes; lane++) {
        claims.add(source.claim(lane, 1000, Duration.ZERO));
      }
      Set<Long> claimed = new HashSet<>();
      for (int lane = 0; lane < lanes; lane++) {
        Claim claim = claims.get(lane);
        for (OutboxEvent e : claim.events()) {
          assertThat(claimed.add(e.id())).as("event %s claimed twice", e.id()).isTrue();
          Integer before = laneOfKey.putIfAbsent(e.key().toString(), lane);
          assertThat(before == null ? lane : before).as("lane of %s", e.key()).isEqualTo(lane);
        }
        claim.settle(
            claim.events().stream().map(e -> (Settlement) new Settlement.Published(e)).toList());
      }
      assertThat(claimed).isEqualTo(inserted);
      inserted.clear();
    }
    assertThat(new HashSet<>(laneOfKey.values())).as("keys spread over lanes").hasSize(lanes);
  }

  @Test
  void delayedEventIsNotClaimedBeforeItsAvailableAt() throws Exception {
    long delayed = insert(fx.sql(), "order", "1", "{}", "{}", 1500);
    long now = fx.insert("order", "2");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    Claim claim = source.claim(0, 10, Duration.ZERO);
    assertThat(ids(claim)).as("a delayed event does not hold back its key").containsExactly(now);
    claim.settle(List.of(new Settlement.Published(claim.events().get(0))));

    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () -> {
              Claim c = source.claim(0, 10, Duration.ofMillis(200));
              List<Long> ids = ids(c);
              c.release();
              return ids.equals(List.of(delayed));
            });
    assertThat(fx.value("SELECT available_at <= now() FROM outbox WHERE id = ?", delayed))
        .isEqualTo(true);
  }

  @Test
  void aNotificationWakesAWaitingClaimLongBeforeThePollInterval() throws Exception {
    PollingSource source =
        fx.source(1, OnPublish.MARK, Map.of("poll-interval", "10s"), new CopyOnWriteArrayList<>());
    source.activate();
    await().atMost(Duration.ofSeconds(5)).until(source::listening);

    CompletableFuture<Claim> waiting =
        CompletableFuture.supplyAsync(() -> claimQuietly(source, Duration.ofSeconds(5)));
    await().atMost(Duration.ofSeconds(5)).until(() -> source.waitingLanes() == 1);
    long start = System.nanoTime();
    long id = fx.insert("order", "1");

    Claim claim = waiting.get();
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertThat(ids(claim)).containsExactly(id);
    assertThat(took).isLessThan(Duration.ofSeconds(1));
    claim.release();
  }

  @Test
  void theListenerReconnectsAfterItsSessionIsKilled() throws Exception {
    PollingSource source =
        fx.source(1, OnPublish.MARK, Map.of("poll-interval", "10s"), new CopyOnWriteArrayList<>());
    source.activate();
    await().atMost(Duration.ofSeconds(5)).until(source::listening);

    assertThat(fx.terminate("listener", null)).isEqualTo(1);
    await().atMost(Duration.ofSeconds(5)).until(() -> !source.listening());
    await().atMost(Duration.ofSeconds(10)).until(source::listening);

    CompletableFuture<Claim> waiting =
        CompletableFuture.supplyAsync(() -> claimQuietly(source, Duration.ofSeconds(5)));
    await().atMost(Duration.ofSeconds(5)).until(() -> source.waitingLanes() == 1);
    long start = System.nanoTime();
    long id = fx.insert("order", "1");
    Claim claim = waiting.get();
    assertThat(ids(claim)).containsExactly(id);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
    claim.release();
  }

  @Test
  void anEmptyClaimReturnsAfterMaxWait() throws Exception {
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    long start = System.nanoTime();

    Claim claim = source.claim(0, 10, Duration.ofMillis(700));

    assertThat(claim.events()).isEmpty();
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isGreaterThanOrEqualTo(Duration.ofMillis(700));
    claim.release();
  }

  @Test
  void anIdleLaneQueriesOncePerPollIntervalHoweverShortTheCallersWait() throws Exception {
    PollingSource source =
        fx.source(1, OnPublish.MARK, Map.of("poll-interval", "5s"), new CopyOnWriteArrayList<>());
    source.activate();
    await().atMost(Duration.ofSeconds(5)).until(source::listening);
    long before = source.claimQueries();

    for (int i = 0; i < 10; i++) {
      source.claim(0, 10, Duration.ofMillis(100)).release();
    }

    assertThat(source.claimQueries() - before).isEqualTo(1);
    long id = fx.insert("order", "1"); // the notification makes the next call query at once
    Claim claim = source.claim(0, 10, Duration.ofSeconds(2));
    assertThat(ids(claim)).containsExactly(id);
    claim.release();
  }

  private static Claim claimQuietly(PollingSource source, Duration wait) {
    try {
      return source.claim(0, 10, wait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The lane a row is in, computed by the database the way the claim does. */
  private int laneOf(PollingSource source, long id) throws Exception {
    return ((Number)
            fx.value(
                "SELECT (hashtext(aggregate_type || chr(31) || aggregate_id) & 2147483647) % 2"
                    + " FROM outbox WHERE id = ?",
                id))
        .intValue();
  }
}
