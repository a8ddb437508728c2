package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
import static io.outbox.relay.it.RelayFixture.STANDING_BY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.FaultProxy;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivateKafka;
import io.outbox.testkit.RelayProcess;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #12, point 2: the active instance is cut off — packets dropped, nothing refused — from the
 * database, or from the broker, while a standby reaches both. With the default leadership settings
 * leadership moves to the standby within 20 s; nothing is lost, first deliveries keep per-key
 * order, no healthy event is charged an attempt; when the network heals, the old active stands by.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CutOffActiveIT {
  private static final Duration BOUND = Duration.ofSeconds(20);
  private static final Duration CUT_OFF = Duration.ofSeconds(30);

  /** Default lease, renewal and stall settings; the fixture's faster ones put back. */
  private static final String DEFAULTS =
      """
      lanes = 2, batch-size = 100
      source.polling { standby-check-interval = 1s, leadership-check-interval = 1s }
      sink.kafka.send-timeout = 30s
      """;

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;
  private FaultProxy proxy;
  private PrivateKafka kafka;
  private OutboxLoad stream;

  @Test
  void leadershipMovesToTheStandbyWhenTheActiveIsCutOffFromTheDatabase() throws Exception {
    fx = relays.closeAfter(new RelayFixture("cut_off_database"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    proxy = relays.closeAfter(FaultProxy.start(Services.pgHost(), Services.pgPort()));
    String viaProxy = "jdbc:postgresql://" + proxy.address() + "/" + fx.db.name();
    RelayProcess a = relays.start("a", fx.config(DEFAULTS, Services.kafkaBootstrap(), viaProxy));
    await().atMost(Duration.ofSeconds(30)).until(() -> a.logContains(ACTIVE));
    RelayProcess b = relays.start("b", fx.config(DEFAULTS));
    await().atMost(Duration.ofSeconds(30)).until(() -> b.logContains(STANDING_BY));

    Result r =
        cutOffAndHeal(
            a,
            b,
            () -> proxy.set(FaultProxy.Mode.BLACKHOLE),
            () -> proxy.set(FaultProxy.Mode.PASS));
    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(r.committed());
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    assertClean(r);
    System.out.printf(
        "CutOffActiveIT (database): standby active %d ms after the cut-off, first publication"
            + " after %d ms; %d events, %d duplicate(s)%n",
        r.takeOver().toMillis(),
        r.firstPublish().toMillis(),
        r.committed().size(),
        deliveries.duplicates());
  }

  @Test
  void leadershipMovesToTheStandbyWhenTheActiveIsCutOffFromTheBroker() throws Exception {
    kafka = relays.closeAfter(PrivateKafka.startBehindProxy());
    fx = relays.closeAfter(new RelayFixture("cut_off_broker"));
    KafkaTestSupport.createTopic(kafka.bootstrap(), fx.topic("order"), 6);
    // A reaches the broker only through the proxy; B directly.
    RelayProcess a = relays.start("a", fx.config(DEFAULTS, kafka.proxiedBootstrap()));
    await().atMost(Duration.ofSeconds(30)).until(() -> a.logContains(ACTIVE));
    RelayProcess b = relays.start("b", fx.config(DEFAULTS, kafka.bootstrap()));
    await().atMost(Duration.ofSeconds(30)).until(() -> b.logContains(STANDING_BY));

    Result r =
        cutOffAndHeal(
            a,
            b,
            () -> kafka.proxy().set(FaultProxy.Mode.BLACKHOLE),
            () -> kafka.proxy().set(FaultProxy.Mode.PASS));
    List<ConsumerRecord<String, byte[]>> records =
        KafkaTestSupport.readToEnd(kafka.bootstrap(), fx.topic("order"), Duration.ofSeconds(30));
    Set<UUID> delivered = new HashSet<>();
    records.forEach(
        rec -> delivered.add(UUID.fromString(KafkaTestSupport.header(rec, "event-id"))));
    assertThat(delivered).containsAll(r.committed());
    RelayFixture.assertFirstDeliveriesInKeyOrder(records, fx.rowIds());
    assertClean(r);
    assertThat(a.log()).contains("giving the active role up");
    System.out.printf(
        "CutOffActiveIT (broker): standby active %d ms after the cut-off, first publication"
            + " after %d ms; %d events, %d duplicate(s)%n",
        r.takeOver().toMillis(),
        r.firstPublish().toMillis(),
        r.committed().size(),
        records.size() - delivered.size());
  }

  private record Result(
      Duration takeOver, Duration firstPublish, Set<UUID> committed, RelayProcess old) {}

  /**
   * Under a stream of events: cuts the active off, waits for the standby to publish, heals the
   * network after {@link #CUT_OFF}, waits for the old active to stand by and for the rest.
   */
  private Result cutOffAndHeal(RelayProcess a, RelayProcess b, Runnable cut, Runnable heal)
      throws Exception {
    stream = relays.closeAfter(OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(10)));
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.published() >= 500);

    Instant cutAt = Instant.now();
    cut.run();
    await().atMost(Duration.ofSeconds(40)).until(() -> b.loggedAt(ACTIVE, cutAt).isPresent());
    Instant bActive = b.loggedAt(ACTIVE, cutAt).orElseThrow();
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.firstPublishedAfter(bActive) != null);
    Duration takeOver = Duration.between(cutAt, bActive);
    Duration firstPublish = Duration.between(cutAt, fx.firstPublishedAfter(bActive));
    await()
        .pollDelay(CUT_OFF.minus(Duration.between(cutAt, Instant.now())))
        .atMost(CUT_OFF.plusSeconds(10))
        .until(() -> true);

    Instant healedAt = Instant.now();
    heal.run();
    long committedNow = stream.committedCount();
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.published() >= committedNow);
    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    // Healed, the old active finds it lost the role and stands by; B stays active.
    await().atMost(Duration.ofSeconds(30)).until(() -> a.loggedAt(STANDING_BY, cutAt).isPresent());
    assertThat(b.loggedAt("pipeline it: lost the active role", healedAt)).isEmpty();
    assertThat(takeOver).as("take-over after the cut-off").isLessThan(BOUND);
    assertThat(firstPublish).as("first publication after the cut-off").isLessThan(BOUND);
    return new Result(takeOver, firstPublish, committed, a);
  }

  private void assertClean(Result r) throws Exception {
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts <> 0")).isZero();
    assertThat(r.old().isAlive()).isTrue();
  }
}
