package io.outbox.source.polling;

import static io.outbox.source.polling.PollingFixture.ids;
import static io.outbox.source.polling.PollingFixture.insert;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Settlement.DeadLetterReason;
import io.outbox.relay.spi.SourceException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SettlementIT {

  private PollingFixture fx;

  @BeforeEach
  void setUp() throws Exception {
    fx = PollingFixture.create("settle");
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void publishedWithMarkSetsPublishedAtAndIsNotClaimedAgain() throws Exception {
    long id = fx.insert("order", "1");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    Claim claim = source.claim(0, 10, Duration.ZERO);

    claim.settle(List.of(new Settlement.Published(claim.events().get(0))));

    assertThat(fx.value("SELECT published_at IS NOT NULL FROM outbox WHERE id = ?", id))
        .isEqualTo(true);
    assertThat(source.claim(0, 10, Duration.ZERO).events()).isEmpty();
  }

  @Test
  void publishedWithDeleteRemovesTheRow() throws Exception {
    long id = fx.insert("order", "1");
    PollingSource source = fx.activeSource(1, OnPublish.DELETE);
    Claim claim = source.claim(0, 10, Duration.ZERO);

    claim.settle(List.of(new Settlement.Published(claim.events().get(0))));

    assertThat(fx.value("SELECT count(*) FROM outbox WHERE id = ?", id)).isEqualTo(0L);
  }

  @Test
  void retryRecordsTheAttemptAndHoldsBackTheKeyUntilItIsDue() throws Exception {
    long a1 = fx.insert("order", "A");
    long b1 = fx.insert("order", "B");
    long a2 = fx.insert("order", "A");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    Claim claim = source.claim(0, 10, Duration.ZERO);
    assertThat(ids(claim)).containsExactly(a1, b1, a2);

    claim.settle(
        List.of(
            new Settlement.Retry(event(claim, a1), 1, Duration.ofSeconds(2), "broker said no"),
            new Settlement.Release(event(claim, b1)),
            new Settlement.Release(event(claim, a2))));

    Map<String, Object> row =
        fx.rows(
                "SELECT attempts, last_error, next_attempt_at - clock_timestamp() AS due_in"
                    + " FROM outbox WHERE id = ?",
                a1)
            .get(0);
    assertThat(row.get("attempts")).isEqualTo(1);
    assertThat(row.get("last_error")).isEqualTo("broker said no");
    assertThat(seconds(row.get("due_in"))).isBetween(1.0, 2.0);

    // Key A is held back (a1 not due, a2 behind it); key B flows.
    Claim next = source.claim(0, 10, Duration.ZERO);
    assertThat(ids(next)).containsExactly(b1);
    next.settle(List.of(new Settlement.Published(next.events().get(0))));

    AtomicReference<Claim> due = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () -> {
              Claim c = source.claim(0, 10, Duration.ofMillis(200));
              if (c.events().isEmpty()) {
                return false;
              }
              due.set(c);
              return true;
            });
    assertThat(ids(due.get())).containsExactly(a1, a2);
    assertThat(due.get().events().get(0).attempts()).isEqualTo(1);
    due.get().release();
  }

  @Test
  void deadLetterMovesTheRowInOneTransaction() throws Exception {
    long id = insert(fx.sql(), "order", "1", "{\"bad\": true}", "{\"h\": \"v\"}", 0);
    Map<String, Object> before = fx.rows("SELECT * FROM outbox WHERE id = ?", id).get(0);
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    Claim claim = source.claim(0, 10, Duration.ZERO);

    claim.settle(
        List.of(
            new Settlement.DeadLetter(
                claim.events().get(0), DeadLetterReason.PERMANENT, 3, "too large for the broker")));

    assertThat(fx.value("SELECT count(*) FROM outbox WHERE id = ?", id)).isEqualTo(0L);
    Map<String, Object> dead = fx.rows("SELECT * FROM outbox_dead_letter WHERE id = ?", id).get(0);
    for (String column :
        List.of(
            "event_id",
            "aggregate_type",
            "aggregate_id",
            "event_type",
            "destination",
            "created_at",
            "available_at")) {
      assertThat(dead.get(column)).as(column).isEqualTo(before.get(column));
    }
    assertThat(dead.get("payload").toString()).isEqualTo(before.get("payload").toString());
    assertThat(dead.get("headers").toString()).isEqualTo(before.get("headers").toString());
    assertThat(dead.get("reason")).isEqualTo("permanent");
    assertThat(dead.get("attempts")).isEqualTo(3);
    assertThat(dead.get("last_error")).isEqualTo("too large for the broker");
    assertThat(dead.get("pipeline")).isEqualTo(PollingFixture.PIPELINE);
    assertThat(dead.get("dead_lettered_at")).isNotNull();
    assertThat(dead.get("published_at")).isNull();
  }

  @Test
  void releaseMakesTheEventsClaimableAgain() throws Exception {
    long id = fx.insert("order", "1");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    Claim claim = source.claim(0, 10, Duration.ZERO);

    claim.release();

    Claim again = source.claim(0, 10, Duration.ZERO);
    assertThat(ids(again)).containsExactly(id);
    assertThat(fx.value("SELECT attempts FROM outbox WHERE id = ?", id)).isEqualTo(0);
    again.release();
  }

  @Test
  void settlesEveryKindInOneCall() throws Exception {
    long published = fx.insert("order", "1");
    long retried = fx.insert("order", "2");
    long dead = fx.insert("order", "3");
    long released = fx.insert("order", "4");
    long unmentioned = fx.insert("order", "5");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    Claim claim = source.claim(0, 10, Duration.ZERO);

    claim.settle(
        List.of(
            new Settlement.Release(event(claim, released)),
            new Settlement.DeadLetter(event(claim, dead), DeadLetterReason.MAX_ATTEMPTS, 10, "x"),
            new Settlement.Retry(event(claim, retried), 4, Duration.ofMinutes(5), "timeout"),
            new Settlement.Published(event(claim, published))));

    assertThat(fx.column("SELECT id FROM outbox WHERE published_at IS NOT NULL"))
        .containsExactly(published);
    assertThat(fx.value("SELECT attempts FROM outbox WHERE id = ?", retried)).isEqualTo(4);
    assertThat(fx.column("SELECT id FROM outbox_dead_letter WHERE reason = 'max-attempts'"))
        .containsExactly(dead);
    Claim rest = source.claim(0, 10, Duration.ZERO);
    assertThat(ids(rest)).containsExactly(released, unmentioned);
    rest.release();
  }

  @Test
  void aClaimEndsExactlyOnce() throws Exception {
    fx.insert("order", "1");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    Claim claim = source.claim(0, 10, Duration.ZERO);
    claim.release();

    assertThatThrownBy(claim::release).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> claim.settle(List.of())).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aSettlementForAForeignEventReleasesTheClaim() throws Exception {
    long id = fx.insert("order", "1");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    Claim claim = source.claim(0, 10, Duration.ZERO);
    OutboxEvent stranger =
        new OutboxEvent(
            id + 100,
            java.util.UUID.randomUUID(),
            "order",
            "1",
            "Created",
            null,
            new byte[0],
            io.outbox.relay.spi.PayloadFormat.JSON,
            Map.of(),
            java.time.Instant.now(),
            0);

    assertThatThrownBy(() -> claim.settle(List.of(new Settlement.Published(stranger))))
        .isInstanceOf(IllegalArgumentException.class);

    Claim again = source.claim(0, 10, Duration.ZERO);
    assertThat(ids(again)).containsExactly(id);
    again.release();
  }

  @Test
  void whenTheClaimSessionDiesSettleFailsAndNothingIsLost() throws Exception {
    long first = fx.insert("order", "1");
    long second = fx.insert("order", "2");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    Claim claim = source.claim(0, 10, Duration.ZERO);

    assertThat(fx.terminate("claims", "idle in transaction")).isEqualTo(1);

    assertThatThrownBy(
            () ->
                claim.settle(
                    claim.events().stream()
                        .map(e -> (Settlement) new Settlement.Published(e))
                        .toList()))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("claimed again");
    assertThat(fx.value("SELECT count(*) FROM outbox WHERE published_at IS NULL")).isEqualTo(2L);
    AtomicReference<List<Long>> again = new AtomicReference<>();
    await()
        .atMost(Duration.ofSeconds(10))
        .ignoreExceptionsInstanceOf(SourceException.class)
        .until(
            () -> {
              Claim c = source.claim(0, 10, Duration.ZERO);
              again.set(ids(c));
              c.release();
              return !again.get().isEmpty();
            });
    assertThat(again.get()).containsExactly(first, second);
  }

  private static OutboxEvent event(Claim claim, long id) {
    return claim.events().stream().filter(e -> e.id() == id).findFirst().orElseThrow();
  }

  private static double seconds(Object interval) {
    org.postgresql.util.PGInterval i = (org.postgresql.util.PGInterval) interval;
    return i.getHours() * 3600 + i.getMinutes() * 60 + i.getSeconds();
  }
}
