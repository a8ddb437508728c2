package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxMessage;
import io.outbox.relay.Relay;
import io.outbox.testkit.KafkaTestSupport;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** The relay core end to end: polling source → Kafka, in-process, against the real services. */
class PollingToKafkaIT {
  private RelayFixture fx;
  private Relay relay;

  private RelayFixture fixture(TestInfo info) {
    fx = new RelayFixture(info.getTestMethod().orElseThrow().getName().toLowerCase());
    return fx;
  }

  @AfterEach
  void tearDown() {
    if (relay != null) {
      relay.close(Duration.ofSeconds(10));
    }
    if (fx != null) {
      fx.close();
    }
  }

  @Test
  @Tag("quick")
  void deliversEveryCommittedEventOnceInKeyOrder(TestInfo info) throws Exception {
    fixture(info);
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    relay = fx.start("lanes = 4, batch-size = 200");

    OutboxLoad.Concurrent written = OutboxLoad.concurrent(fx, 8, 25, 10_000);
    assertConcurrentScenarioDelivered(fx, written);
  }

  /**
   * The same settling by position: windows cut between snapshots while eight writers commit and
   * roll back around the claims, each row read once, in the window of its commit.
   */
  @Test
  void deliversEveryCommittedEventOnceInKeyOrderSettlingByPosition(TestInfo info) throws Exception {
    fx = RelayFixture.byPosition(info.getTestMethod().orElseThrow().getName().toLowerCase());
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    relay = fx.start("lanes = 4, batch-size = 200, on-publish = position");

    OutboxLoad.Concurrent written = OutboxLoad.concurrent(fx, 8, 25, 10_000);
    assertConcurrentScenarioDelivered(fx, written);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL"))
        .as("no row written")
        .isZero();
  }

  /**
   * Every committed event of {@link OutboxLoad#concurrent} delivered exactly once with its headers,
   * no rolled-back one, first deliveries in key order, no dead letter.
   */
  static void assertConcurrentScenarioDelivered(RelayFixture fx, OutboxLoad.Concurrent written)
      throws Exception {
    Set<UUID> committed = written.committed();
    Set<UUID> rolledBack = written.rolledBack();
    assertThat(committed.size()).isGreaterThanOrEqualTo(10_000);
    assertThat(rolledBack).isNotEmpty();

    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    List<ConsumerRecord<String, byte[]>> records =
        fx.read(fx.topic("order"), committed.size(), Duration.ofSeconds(30));
    // Give a duplicate, if any, the chance to show up.
    records = fx.read(fx.topic("order"), committed.size() + 1, Duration.ofSeconds(2));

    List<UUID> delivered = new ArrayList<>();
    for (ConsumerRecord<String, byte[]> r : records) {
      delivered.add(UUID.fromString(KafkaTestSupport.header(r, "event-id")));
      assertThat(KafkaTestSupport.header(r, "event-type")).isEqualTo("OrderUpdated");
      assertThat(KafkaTestSupport.header(r, "aggregate-type")).isEqualTo("order");
      assertThat(KafkaTestSupport.header(r, "aggregate-id")).isEqualTo(r.key());
      assertThat(Instant.parse(KafkaTestSupport.header(r, "created-at"))).isBefore(Instant.now());
      assertThat(KafkaTestSupport.header(r, "seq")).isNotNull();
      assertThat(KafkaTestSupport.valueAsString(r)).startsWith("{\"seq\":");
    }
    assertThat(delivered).doesNotHaveDuplicates();
    assertThat(new HashSet<>(delivered)).isEqualTo(committed);
    assertThat(Collections.disjoint(delivered, rolledBack)).isTrue();
    RelayFixture.assertFirstDeliveriesInKeyOrder(records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
  }

  @Test
  void publishesRowCommittedAfterALargerIdWasPublished(TestInfo info) throws Exception {
    fixture(info);
    relay = fx.start("");
    try (Connection t1 = fx.db.connect()) {
      t1.setAutoCommit(false);
      UUID early = fx.writer.write(t1, event("slow", 1)); // smaller id, commits last
      UUID late = fx.commit(List.of(event("fast", 1))).get(0);

      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL") == 1);
      assertThat(eventIds(fx.read(fx.topic("order"), 1, Duration.ofSeconds(10))))
          .containsExactly(late);

      t1.commit();
      await().atMost(Duration.ofSeconds(20)).until(() -> fx.unpublished() == 0);
      assertThat(eventIds(fx.read(fx.topic("order"), 2, Duration.ofSeconds(10))))
          .containsExactlyInAnyOrder(early, late);
      assertThat(fx.rowIds().get(early)).isLessThan(fx.rowIds().get(late));
    }
  }

  @Test
  void delayedEventIsNotPublishedBeforeItsTime(TestInfo info) throws Exception {
    fixture(info);
    relay = fx.start("");
    Instant at = Instant.now().plusSeconds(4);
    UUID delayed =
        fx.commit(
                List.of(
                    OutboxMessage.builder()
                        .aggregate("order", "d1")
                        .eventType("ReminderDue")
                        .payload("{}")
                        .availableAt(at)
                        .build()))
            .get(0);
    UUID now = fx.commit(List.of(event("n1", 1))).get(0);

    await().atMost(Duration.ofSeconds(10)).until(() -> fx.unpublished() == 1);
    assertThat(eventIds(fx.read(fx.topic("order"), 1, Duration.ofSeconds(5)))).containsExactly(now);
    assertThat(Instant.now()).isBefore(at);

    await().atMost(Duration.ofSeconds(20)).until(() -> fx.unpublished() == 0);
    assertThat(Instant.now()).isAfterOrEqualTo(at);
    assertThat(eventIds(fx.read(fx.topic("order"), 2, Duration.ofSeconds(5))))
        .containsExactlyInAnyOrder(now, delayed);
  }

  @Test
  @Tag("quick")
  void poisonEventsAreDeadLetteredWhileOtherKeysFlow(TestInfo info) throws Exception {
    fixture(info);
    relay = fx.start("");
    String big = "{\"blob\":\"" + "x".repeat(1_200_000) + "\"}";
    UUID tooLarge =
        fx.commit(
                List.of(
                    OutboxMessage.builder()
                        .aggregate("order", "poison-1")
                        .eventType("Huge")
                        .payload(big)
                        .build()))
            .get(0);
    UUID badTopic = fx.commit(List.of(RelayFixture.misrouted("poison-2"))).get(0);
    List<UUID> healthy = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      healthy.addAll(fx.commit(List.of(event("healthy-" + (i % 7), i))));
    }

    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> fx.count("SELECT count(*) FROM outbox_dead_letter") == 2);
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    assertThat(eventIds(fx.read(fx.topic("order"), 50, Duration.ofSeconds(10))))
        .containsExactlyInAnyOrderElementsOf(healthy);

    try (Connection c = fx.db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT event_id, reason, attempts, last_error, pipeline FROM outbox_dead_letter")) {
      Map<UUID, String> errors = new ConcurrentHashMap<>();
      while (rs.next()) {
        assertThat(rs.getString("reason")).isEqualTo("permanent");
        assertThat(rs.getInt("attempts")).isEqualTo(1);
        assertThat(rs.getString("pipeline")).isEqualTo("it");
        String error = rs.getString("last_error");
        assertThat(error).doesNotContain("\n").doesNotContain("xxxxxxxx");
        errors.put(rs.getObject("event_id", UUID.class), error);
      }
      assertThat(errors.keySet()).containsExactlyInAnyOrder(tooLarge, badTopic);
      assertThat(errors.get(tooLarge)).containsIgnoringCase("too large");
      assertThat(errors.get(badTopic)).contains("not a valid topic!");
    }
    assertThat(
            fx.count(
                "SELECT count(*) FROM outbox WHERE event_id IN ('"
                    + tooLarge
                    + "','"
                    + badTopic
                    + "')"))
        .isZero();
  }

  @Test
  void retryableFailuresBackOffThenDeadLetterAndTheKeyResumes(TestInfo info) throws Exception {
    fixture(info);
    // A topic that refuses every record whose timestamp is older than the broker's clock (all of
    // them: the producer stamps at send time). The broker answers INVALID_TIMESTAMP, a per-record
    // error the sink counts as retryable (it passes once the clocks agree).
    String stuck = fx.stuckTopic();
    relay = fx.start("retry { initial-backoff = 1s, max-backoff = 4s }");

    UUID blocked =
        fx.commit(
                List.of(
                    OutboxMessage.builder()
                        .aggregate("order", "k")
                        .eventType("Stuck")
                        .destination(stuck)
                        .payload("{}")
                        .build()))
            .get(0);
    UUID waiting = fx.commit(List.of(event("k", 2))).get(0);
    UUID other = fx.commit(List.of(event("other", 1))).get(0);

    // Watch the rows from the start: k's later event must stay unpublished for as long as the
    // failing event is in the outbox; attempts and next_attempt_at grow with backoff (1 s, then
    // 2 s: jitter is 0 here); after max-attempts (3) the event is dead-lettered.
    Map<Integer, Long> nextAttemptAt = new ConcurrentHashMap<>();
    Map<Integer, String> lastError = new ConcurrentHashMap<>();
    await()
        .atMost(Duration.ofSeconds(60))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () -> {
              try (Connection c = fx.db.connect();
                  Statement st = c.createStatement();
                  ResultSet rs =
                      st.executeQuery(
                          "SELECT b.attempts, (extract(epoch FROM b.next_attempt_at) * 1000)::bigint,"
                              + " b.last_error, w.published_at IS NOT NULL"
                              + " FROM outbox b, outbox w WHERE b.event_id = '"
                              + blocked
                              + "' AND w.event_id = '"
                              + waiting
                              + "'")) {
                if (rs.next()) {
                  assertThat(rs.getBoolean(4)).as("k's later event waits").isFalse();
                  if (rs.getInt(1) > 0) {
                    nextAttemptAt.putIfAbsent(rs.getInt(1), rs.getLong(2));
                    lastError.putIfAbsent(rs.getInt(1), rs.getString(3));
                  }
                  return false;
                }
              }
              return fx.count(
                      "SELECT count(*) FROM outbox_dead_letter WHERE reason = 'max-attempts'"
                          + " AND attempts = 3 AND event_id = '"
                          + blocked
                          + "'")
                  == 1;
            });
    assertThat(lastError.get(1)).contains(stuck).doesNotContain("\n");
    assertThat(
            fx.count(
                "SELECT count(*) FROM outbox WHERE published_at IS NOT NULL AND event_id = '"
                    + other
                    + "'"))
        .as("other keys flowed meanwhile")
        .isEqualTo(1);
    assertThat(nextAttemptAt).containsKeys(1, 2);
    assertThat(nextAttemptAt.get(2) - nextAttemptAt.get(1))
        .as("the second backoff (2 s) starts after the first one (1 s) ended")
        .isGreaterThanOrEqualTo(2000);
    await().atMost(Duration.ofSeconds(20)).until(() -> fx.unpublished() == 0);
    assertThat(eventIds(fx.read(fx.topic("order"), 2, Duration.ofSeconds(10))))
        .containsExactlyInAnyOrder(waiting, other);
  }

  @Test
  void deadLettersAreAlsoPublishedToTheDeadLetterDestination(TestInfo info) throws Exception {
    fixture(info);
    relay = fx.start("dead-letter.destination = \"" + fx.topicPrefix + ".dlq.${aggregate_type}\"");
    UUID poison =
        fx.commit(
                List.of(
                    OutboxMessage.builder()
                        .aggregate("order", "p1")
                        .eventType("Misrouted")
                        .destination("bad topic name")
                        .payload("{\"n\":1}")
                        .header("trace", "t-1")
                        .build()))
            .get(0);

    List<ConsumerRecord<String, byte[]>> dead =
        fx.read(fx.topicPrefix + ".dlq.order", 1, Duration.ofSeconds(30));
    assertThat(dead).hasSize(1);
    ConsumerRecord<String, byte[]> r = dead.get(0);
    assertThat(KafkaTestSupport.header(r, "event-id")).isEqualTo(poison.toString());
    assertThat(KafkaTestSupport.header(r, "dead-letter-reason")).isEqualTo("permanent");
    assertThat(KafkaTestSupport.header(r, "dead-letter-attempts")).isEqualTo("1");
    assertThat(KafkaTestSupport.header(r, "dead-letter-error")).contains("bad topic name");
    assertThat(KafkaTestSupport.header(r, "trace")).isEqualTo("t-1");
    assertThat(KafkaTestSupport.valueAsString(r)).isEqualTo("{\"n\": 1}");
    // The table stays the source of truth.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                fx.count(
                        "SELECT count(*) FROM outbox_dead_letter WHERE event_id = '" + poison + "'")
                    == 1);
  }

  static List<UUID> eventIds(List<ConsumerRecord<String, byte[]>> records) {
    return records.stream()
        .map(
            r ->
                UUID.fromString(
                    new String(r.headers().lastHeader("event-id").value(), StandardCharsets.UTF_8)))
        .toList();
  }
}
