package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.KafkaTestSupport;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two relay processes on one pipeline: one publishes, the other stands by, and takes over within
 * seconds when the first is killed with {@code kill -9}.
 */
class StandbyTakeoverIT {
  private static final String ACTIVE = "pipeline it: active, ";
  private static final String NOW_ACTIVE = "pipeline it: this instance is now the active one";
  private static final String STANDING_BY = "pipeline it: another instance is active for";

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;
  private OutboxLoad stream;
  private LockSampler locks;

  @AfterEach
  void tearDown() {
    if (stream != null) {
      stream.close();
    }
    if (locks != null) {
      locks.close();
    }
    relays.killAll();
    if (fx != null) {
      fx.close();
    }
  }

  @Test
  void secondInstanceStandsByAndTakesOverAfterKill9() throws Exception {
    fx = new RelayFixture("standby_takeover");
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    RelayProcess a = relays.start("a", config("relay-a"));
    await().atMost(Duration.ofSeconds(30)).until(() -> a.logContains(ACTIVE));
    RelayProcess b = relays.start("b", config("relay-b"));
    await().atMost(Duration.ofSeconds(30)).until(() -> b.logContains(STANDING_BY));

    locks = LockSampler.start(fx, Duration.ofMillis(20));
    stream = OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(10));
    await().atMost(Duration.ofSeconds(30)).until(() -> published() >= 1_000);
    assertThat(b.log()).doesNotContain(NOW_ACTIVE).doesNotContain(ACTIVE);

    long killNanos = System.nanoTime();
    Instant killedAt = Instant.now();
    a.kill9();
    await().atMost(Duration.ofSeconds(15)).until(() -> b.logContains(ACTIVE));
    Duration takeOver = Duration.between(killedAt, b.loggedAt(ACTIVE).orElseThrow());
    long committedAtKill = stream.committedCount();
    await().atMost(Duration.ofSeconds(30)).until(() -> published() >= committedAtKill + 1_000);
    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    Duration firstPublish = Duration.between(killedAt, firstPublishedAfter(killedAt));
    List<LockSampler.Sample> samples = locks.stop();

    assertThat(takeOver).as("take-over time").isLessThan(Duration.ofSeconds(5));
    assertThat(firstPublish)
        .as("first publication after the kill")
        .isLessThan(Duration.ofSeconds(5));
    assertThat(b.loggedAt(STANDING_BY).orElseThrow()).isBefore(killedAt);
    assertThat(b.loggedAt(NOW_ACTIVE).orElseThrow()).isAfter(killedAt);
    assertNeverBothClaiming(samples, killNanos);

    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts <> 0")).isZero();
    System.out.printf(
        "StandbyTakeoverIT: take-over %d ms after kill -9 (first publication %d ms); %d events,"
            + " %d duplicate(s); %d lock samples%n",
        takeOver.toMillis(),
        firstPublish.toMillis(),
        committed.size(),
        deliveries.duplicates(),
        samples.size());
  }

  /**
   * What the database saw: while both processes lived, only A held the leader lock and only A had
   * claims open (a claim transaction holds its lane's lock while its batch is published); B never
   * had one before the kill; at no moment did both have claims open.
   */
  private static void assertNeverBothClaiming(List<LockSampler.Sample> samples, long killNanos) {
    List<LockSampler.Sample> before = samples.stream().filter(s -> s.nanos() < killNanos).toList();
    List<LockSampler.Sample> after = samples.stream().filter(s -> s.nanos() > killNanos).toList();
    assertThat(before).allSatisfy(s -> assertThat(s.leader()).containsExactly("relay-a"));
    assertThat(before).allSatisfy(s -> assertThat(s.claiming()).isSubsetOf("relay-a"));
    assertThat(before)
        .as("samples that caught A publishing (else this check proves nothing)")
        .filteredOn(s -> s.claiming().contains("relay-a"))
        .hasSizeGreaterThan(5);
    assertThat(samples).allSatisfy(s -> assertThat(s.claiming()).hasSizeLessThanOrEqualTo(1));
    assertThat(after).filteredOn(s -> s.claiming().contains("relay-b")).isNotEmpty();
    assertThat(after.get(after.size() - 1).leader()).containsExactly("relay-b");
  }

  private String config(String applicationName) {
    return fx.config(
        "lanes = 4, batch-size = 100, database.properties { ApplicationName = \""
            + applicationName
            + "\" }");
  }

  private long published() throws Exception {
    return fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL");
  }

  private Instant firstPublishedAfter(Instant t) throws Exception {
    try (var c = fx.db.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT min(published_at) FROM outbox WHERE published_at > ?")) {
      ps.setTimestamp(1, Timestamp.from(t));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getTimestamp(1).toInstant();
      }
    }
  }
}
