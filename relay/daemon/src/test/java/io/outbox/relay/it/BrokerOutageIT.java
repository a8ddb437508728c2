package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.typesafe.config.ConfigFactory;
import io.outbox.client.OutboxMessage;
import io.outbox.relay.Relay;
import io.outbox.relay.config.RelayConfigLoader;
import io.outbox.relay.pipeline.Pipeline;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivateKafka;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The failure classes (docs/design.md) against a real broker that goes away: a Kafka outage longer
 * than the send timeout pauses the pipeline, costs no attempts and dead-letters nothing, and once
 * the broker is back every event is delivered, first deliveries in per-key order. The broker is a
 * private one (the shared broker of the other tests is never stopped), shared by the tests of this
 * class.
 */
class BrokerOutageIT {
  private static final Logger log = LoggerFactory.getLogger(BrokerOutageIT.class);

  /**
   * Settings under which a miscounted outage would show at once: the outage lasts several
   * send-timeouts, and two counted attempts would dead-letter an event.
   */
  private static final String OUTAGE_SETTINGS =
      """
      lanes = 4
      sink.kafka.send-timeout = 3s
      sink.reconnect-backoff { initial = 200ms, max = 1s }
      retry.max-attempts = 2
      """;

  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(3);
  private static final Duration OUTAGE_WRITES = Duration.ofSeconds(9);
  private static final int PARTITIONS = 6;

  private static PrivateKafka kafka;

  private RelayFixture fx;
  private Relay relay;
  private InvariantWatch watch;

  @BeforeAll
  static void startBroker() {
    long t0 = System.nanoTime();
    kafka = PrivateKafka.start();
    log.info("private Kafka {} up in {} ms", kafka.bootstrap(), millisSince(t0));
  }

  @AfterAll
  static void stopBroker() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @BeforeEach
  void setUp(TestInfo info) {
    if (!kafka.isRunning()) {
      kafka.restart(); // an earlier test failed during its outage
    }
    fx = new RelayFixture(info.getTestMethod().orElseThrow().getName().toLowerCase());
    KafkaTestSupport.createTopic(kafka.bootstrap(), fx.topic("order"), PARTITIONS);
  }

  @AfterEach
  void tearDown() {
    if (watch != null) {
      watch.close();
    }
    if (relay != null) {
      relay.close(Duration.ofSeconds(10));
    }
    if (fx != null) {
      fx.close();
    }
  }

  @Test
  @Tag("quick")
  void outageDeadLettersNothingAndConsumesNoAttempts() throws Exception {
    startRelay();
    Set<UUID> committed = ConcurrentHashMap.newKeySet();
    Map<String, Integer> seqs = new HashMap<>();
    for (int t = 0; t < 20; t++) {
      List<OutboxMessage> tx = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        String key = "k" + ((t + i) % 12);
        tx.add(event(key, seqs.merge(key, 1, Integer::sum)));
      }
      committed.addAll(fx.commit(tx));
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    assertThat(readAll()).hasSize(committed.size());

    long outageStart = System.nanoTime();
    kafka.stop();
    log.info("broker stopped in {} ms", millisSince(outageStart));
    CompletableFuture<Void> writes = writeWhileDown(committed, seqs, OUTAGE_WRITES);
    await().atMost(SEND_TIMEOUT.multipliedBy(3)).until(() -> !pipeline().sinkAvailable());
    await().atMost(OUTAGE_WRITES.plusSeconds(20)).until(writes::isDone);
    writes.join(); // rethrows a failed write
    log.info("outage writes done after {} ms", millisSince(outageStart));
    Duration outage = Duration.ofNanos(System.nanoTime() - outageStart);
    assertThat(outage).isGreaterThan(SEND_TIMEOUT.multipliedBy(2));
    assertThat(fx.unpublished()).as("events written during the outage wait").isPositive();
    watch.assertClean();

    restartBroker();
    assertEverythingDelivered(committed);
  }

  @Test
  void brokerKilledMidBatchLosesNothing() throws Exception {
    int total = 20_000;
    Set<UUID> committed = new HashSet<>();
    try (Connection c = fx.db.connect()) {
      c.setAutoCommit(false);
      List<OutboxMessage> tx = new ArrayList<>();
      int[] seqs = new int[200];
      for (int i = 0; i < total; i++) {
        int key = ThreadLocalRandom.current().nextInt(seqs.length);
        tx.add(event("k" + key, ++seqs[key]));
        if (tx.size() == 1_000) {
          committed.addAll(fx.writer.writeAll(c, tx));
          c.commit();
          tx.clear();
        }
      }
    }
    assertThat(committed).hasSize(total);

    startRelay();
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> fx.unpublished() <= total - 2_000);
    kafka.kill();
    long left = fx.unpublished();
    log.info("broker killed with {} of {} events unpublished", left, total);
    assertThat(left).as("the broker died while the backlog drained").isPositive();

    await().atMost(SEND_TIMEOUT.multipliedBy(3)).until(() -> !pipeline().sinkAvailable());
    // The broker stays down for longer than a send-timeout while the pipeline probes.
    await()
        .during(SEND_TIMEOUT.plusSeconds(1))
        .atMost(SEND_TIMEOUT.plusSeconds(3))
        .until(() -> !pipeline().sinkAvailable());
    watch.assertClean();

    restartBroker();
    assertEverythingDelivered(committed);
  }

  private static void restartBroker() {
    long t0 = System.nanoTime();
    kafka.restart();
    log.info("broker restarted in {} ms", millisSince(t0));
  }

  private static long millisSince(long t0) {
    return (System.nanoTime() - t0) / 1_000_000;
  }

  private void startRelay() {
    relay =
        Relay.start(
            RelayConfigLoader.standard()
                .load(
                    ConfigFactory.parseString(fx.config(OUTAGE_SETTINGS, kafka.bootstrap())),
                    "test")
                .settings());
    watch = new InvariantWatch(fx, pipeline());
  }

  private Pipeline pipeline() {
    return relay.pipelines().get(0);
  }

  /**
   * Commits one to three events on one of twelve keys every 50 ms for {@code span}, from one thread
   * (so each key's row ids follow its commit order); completes when done.
   */
  private CompletableFuture<Void> writeWhileDown(
      Set<UUID> committed, Map<String, Integer> seqs, Duration span) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    ScheduledExecutorService writer =
        Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "outage-writer"));
    long end = System.nanoTime() + span.toNanos();
    writer.scheduleAtFixedRate(
        () -> {
          if (System.nanoTime() - end >= 0) {
            done.complete(null);
            return;
          }
          ThreadLocalRandom random = ThreadLocalRandom.current();
          List<OutboxMessage> tx = new ArrayList<>();
          for (int i = 1 + random.nextInt(3); i > 0; i--) {
            String key = "k" + random.nextInt(12);
            tx.add(event(key, seqs.merge(key, 1, Integer::sum)));
          }
          try {
            committed.addAll(fx.commit(tx));
          } catch (SQLException | RuntimeException e) {
            done.completeExceptionally(e);
          }
        },
        0,
        50,
        TimeUnit.MILLISECONDS);
    done.whenComplete((v, e) -> writer.shutdownNow());
    return done;
  }

  private void assertEverythingDelivered(Set<UUID> committed) throws SQLException {
    long t0 = System.nanoTime();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    log.info("all {} events published {} ms after the restart", committed.size(), millisSince(t0));
    assertThat(pipeline().sinkAvailable()).isTrue();
    List<ConsumerRecord<String, byte[]>> records = readAll();

    Map<UUID, ConsumerRecord<String, byte[]>> first = new HashMap<>();
    Map<String, UUID> eventOfKeyAndSeq = new HashMap<>();
    for (ConsumerRecord<String, byte[]> r : records) {
      UUID id = UUID.fromString(KafkaTestSupport.header(r, "event-id"));
      // A duplicate (an in-doubt publish sent again) carries the same event id...
      String keyAndSeq = r.key() + "/" + KafkaTestSupport.header(r, "seq");
      assertThat(eventOfKeyAndSeq.putIfAbsent(keyAndSeq, id))
          .as("event id of every copy of %s", keyAndSeq)
          .isIn(null, id);
      // ... and is the same event, byte for byte.
      ConsumerRecord<String, byte[]> earlier = first.putIfAbsent(id, r);
      if (earlier != null) {
        assertThat(r.key()).as("key of duplicate %s", id).isEqualTo(earlier.key());
        assertThat(r.value()).as("value of duplicate %s", id).isEqualTo(earlier.value());
      }
    }
    log.info("{} records for {} events", records.size(), first.size());
    assertThat(first.keySet()).isEqualTo(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts > 0")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    watch.assertClean();
    assertThat(watch.sinkWentDown()).as("the pipeline saw the outage").isTrue();
    assertThat(pipeline().stats().released())
        .as("events caught by the outage were released, not judged")
        .isPositive();
    assertThat(pipeline().stats().retried()).isZero();
    assertThat(pipeline().stats().deadLettered()).isZero();
  }

  private List<ConsumerRecord<String, byte[]>> readAll() {
    return KafkaTestSupport.readToEnd(kafka.bootstrap(), fx.topic("order"), Duration.ofSeconds(30));
  }
}
