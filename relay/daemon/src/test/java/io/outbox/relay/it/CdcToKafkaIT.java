package io.outbox.relay.it;

import static io.outbox.relay.it.PollingToKafkaIT.eventIds;
import static io.outbox.relay.it.RelayFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxMessage;
import io.outbox.relay.Relay;
import io.outbox.testkit.KafkaTestSupport;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** The CDC source end to end, in-process: PostgreSQL's WAL (pgoutput) → relay → Kafka. */
class CdcToKafkaIT {
  private RelayFixture fx;
  private Relay relay;

  private RelayFixture fixture(TestInfo info) {
    fx = new RelayFixture("cdc_" + info.getTestMethod().orElseThrow().getName().toLowerCase());
    return fx;
  }

  @AfterEach
  void tearDown() {
    if (relay != null) {
      relay.close(Duration.ofSeconds(10));
    }
    if (fx != null) {
      fx.close(); // drops the database and its replication slot
    }
  }

  /** Starts the relay on the CDC source and waits until its slot exists (changes are captured). */
  private Relay startCdc(String extra, String cdcExtra) {
    Relay r = fx.start(fx.cdc(cdcExtra) + extra);
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.slotConfirmedLsn() >= 0);
    return r;
  }

  @Test
  void deliversEveryCommittedEventOnceInKeyOrder(TestInfo info) throws Exception {
    fixture(info);
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    relay = startCdc("lanes = 4, batch-size = 200", "");
    long started = System.nanoTime();

    OutboxLoad.Concurrent written = OutboxLoad.concurrent(fx, 8, 25, 10_000);
    PollingToKafkaIT.assertConcurrentScenarioDelivered(fx, written);
    System.out.printf(
        "CdcToKafkaIT: %d events through CDC in %d ms (writes included)%n",
        written.committed().size(), (System.nanoTime() - started) / 1_000_000);
  }

  @Test
  void transactionOpenAcrossARestartIsDelivered(TestInfo info) throws Exception {
    fixture(info);
    relay = startCdc("", "");
    try (Connection t1 = fx.db.connect()) {
      t1.setAutoCommit(false);
      UUID early = fx.writer.write(t1, event("slow", 1)); // T1: open, smaller id
      UUID late = fx.commit(List.of(event("fast", 1))).get(0); // T2: commits first
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL") == 1);
      // Let the position past T2 be stored before the stop.
      long afterT2 = fx.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
      await().atMost(Duration.ofSeconds(20)).until(() -> fx.slotConfirmedLsn() >= afterT2);
      relay.close(Duration.ofSeconds(10));
      relay = null;

      t1.commit(); // while no relay runs
      relay = startCdc("", "");
      await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
      assertThat(eventIds(fx.read(fx.topic("order"), 2, Duration.ofSeconds(10))))
          .containsExactlyInAnyOrder(early, late);
    }
  }

  @Test
  void poisonEventIsDeadLetteredAndTheOffsetMovesOn(TestInfo info) throws Exception {
    fixture(info);
    relay = startCdc("", "");
    UUID poison = fx.commit(List.of(RelayFixture.misrouted("p1"))).get(0);
    List<UUID> healthy = fx.commit(List.of(event("h1", 1), event("h2", 1)));
    long afterPoison = fx.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");

    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                fx.count(
                        "SELECT count(*) FROM outbox_dead_letter WHERE reason = 'permanent'"
                            + " AND attempts = 1 AND pipeline = 'it' AND event_id = '"
                            + poison
                            + "'")
                    == 1);
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.slotConfirmedLsn() >= afterPoison);
    assertThat(eventIds(fx.read(fx.topic("order"), 2, Duration.ofSeconds(10))))
        .containsExactlyInAnyOrderElementsOf(healthy);
  }

  @Test
  void retryThenSuccessKeepsKeyOrder(TestInfo info) throws Exception {
    fixture(info);
    // A topic that refuses every record at first (its timestamps are "too old"): a retryable
    // per-record error. After the first failure the topic is fixed, and the retry succeeds.
    String stuck = fx.stuckTopic();
    relay = startCdc("retry { initial-backoff = 1s, max-backoff = 2s }", "");
    List<UUID> ids =
        fx.commit(
            List.of(toStuck(stuck, 1), toStuck(stuck, 2), toStuck(stuck, 3), event("other", 1)));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                fx.count(
                        "SELECT count(*) FROM outbox WHERE attempts = 1 AND event_id = '"
                            + ids.get(0)
                            + "'")
                    == 1);
    assertThat(
            fx.count(
                "SELECT count(*) FROM outbox WHERE published_at IS NOT NULL AND event_id IN ('"
                    + ids.get(1)
                    + "','"
                    + ids.get(2)
                    + "')"))
        .as("k's later events wait for the retry")
        .isZero();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                fx.count(
                        "SELECT count(*) FROM outbox WHERE published_at IS NOT NULL"
                            + " AND event_id = '"
                            + ids.get(3)
                            + "'")
                    == 1);
    RelayFixture.unstick(stuck);
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    assertThat(eventIds(fx.read(stuck, 3, Duration.ofSeconds(10))))
        .containsExactly(ids.get(0), ids.get(1), ids.get(2));
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
  }

  private static OutboxMessage toStuck(String topic, int seq) {
    return OutboxMessage.builder()
        .aggregate("order", "k")
        .eventType("OrderUpdated")
        .destination(topic)
        .payload("{\"seq\":" + seq + "}")
        .build();
  }
}
