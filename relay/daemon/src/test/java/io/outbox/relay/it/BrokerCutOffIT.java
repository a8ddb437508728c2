package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.Relay;
import io.outbox.relay.pipeline.Pipeline;
import io.outbox.testkit.FaultProxy;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivateKafka;
import io.outbox.testkit.Teardown;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The broker cut off without a reset: the relay reaches a private Kafka only through a {@link
 * FaultProxy} (the broker advertises the proxy's port, so every connection of the producer goes
 * through it), which drops every byte both ways for 15 s while the application keeps writing. The
 * pipeline must see an outage — paused, no attempts counted, nothing dead-lettered — not hang, and
 * once the network is back deliver everything, first deliveries in per-key order.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class BrokerCutOffIT {
  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(3);
  private static final Duration CUT_OFF = Duration.ofSeconds(15);
  private static final String SETTINGS =
      """
      lanes = 4
      sink.kafka.send-timeout = 3s
      sink.reconnect-backoff { initial = 200ms, max = 1s }
      retry.max-attempts = 2
      """;

  @RegisterExtension final Teardown teardown = new Teardown();
  private PrivateKafka kafka;
  private RelayFixture fx;
  private Relay relay;
  private InvariantWatch watch;
  private OutboxLoad stream;

  @Test
  void aBlackHoledBrokerIsAnOutageThatCostsNoAttemptsAndEndsByItself() throws Exception {
    kafka = teardown.add(PrivateKafka.startBehindProxy());
    fx = teardown.add(new RelayFixture("broker_cut_off"));
    KafkaTestSupport.createTopic(kafka.bootstrap(), fx.topic("order"), 6);
    relay = RelayFixture.startWith(fx.config(SETTINGS, kafka.proxiedBootstrap()));
    teardown.add(() -> relay.close(Duration.ofSeconds(10)));
    watch = teardown.add(new InvariantWatch(fx, pipeline()));
    stream = teardown.add(OutboxLoad.stream(fx, 12, 3, Duration.ofMillis(50)));
    await().atMost(Duration.ofSeconds(30)).until(() -> published() >= 200);
    assertThat(kafka.proxy().openConnections())
        .as("the producer goes through the proxy")
        .isPositive();

    long cutAt = System.nanoTime();
    kafka.proxy().set(FaultProxy.Mode.BLACKHOLE);
    await()
        .atMost(SEND_TIMEOUT.multipliedBy(3))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> !pipeline().sinkAvailable());
    Duration detected = Duration.ofNanos(System.nanoTime() - cutAt);
    // Paused for the rest of the cut: probes find nothing, no batch is judged.
    await()
        .during(CUT_OFF.minus(Duration.ofNanos(System.nanoTime() - cutAt)))
        .atMost(CUT_OFF.plusSeconds(5))
        .until(() -> !pipeline().sinkAvailable());
    watch.assertClean();
    long unpublishedAtTheEnd = fx.unpublished();
    assertThat(unpublishedAtTheEnd).as("events written during the cut-off wait").isPositive();

    long healedAt = System.nanoTime();
    kafka.proxy().set(FaultProxy.Mode.PASS);
    await().atMost(Duration.ofSeconds(30)).until(() -> pipeline().sinkAvailable());
    Duration resumed = Duration.ofNanos(System.nanoTime() - healedAt);
    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);

    List<ConsumerRecord<String, byte[]>> records =
        KafkaTestSupport.readToEnd(kafka.bootstrap(), fx.topic("order"), Duration.ofSeconds(30));
    int duplicates = assertEveryEventOnceAtLeastAndCopiesIdentical(records, committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts > 0")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    watch.assertClean();
    assertThat(pipeline().stats().retried()).isZero();
    assertThat(pipeline().stats().deadLettered()).isZero();
    System.out.printf(
        "BrokerCutOffIT: outage seen %d ms after the cut-off; publishing resumed %d ms after the"
            + " network came back; %d events, %d duplicate(s)%n",
        detected.toMillis(), resumed.toMillis(), committed.size(), duplicates);
  }

  /** Every committed event delivered, nothing else; returns how many records repeat one. */
  private static int assertEveryEventOnceAtLeastAndCopiesIdentical(
      List<ConsumerRecord<String, byte[]>> records, Set<UUID> committed) {
    Map<UUID, ConsumerRecord<String, byte[]>> first = new HashMap<>();
    for (ConsumerRecord<String, byte[]> r : records) {
      UUID id = UUID.fromString(KafkaTestSupport.header(r, "event-id"));
      ConsumerRecord<String, byte[]> earlier = first.putIfAbsent(id, r);
      if (earlier != null) {
        assertThat(r.key()).as("key of duplicate %s", id).isEqualTo(earlier.key());
        assertThat(r.value()).as("value of duplicate %s", id).isEqualTo(earlier.value());
      }
    }
    assertThat(first.keySet()).isEqualTo(committed);
    return records.size() - first.size();
  }

  private Pipeline pipeline() {
    return relay.pipelines().get(0);
  }

  private long published() throws Exception {
    return fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL");
  }
}
