package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
import static io.outbox.relay.it.RelayFixture.STANDING_BY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #12, point 1: the active instance freezes (SIGSTOP, as in a long GC or VM pause) while its
 * sessions stay open. The standby takes over within the bound the lease settings imply ({@link
 * Leadership#FAST}: a lease scaled down from 10 s to 4 s), and when the frozen instance wakes up it
 * neither publishes nor settles anything out of order: its lease ran out and its epoch is fenced.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class FrozenActiveIT {
  private static final Leadership LEADERSHIP = Leadership.FAST;

  /** Longest wait for a relay process to start (a JVM start on a loaded machine). */
  private static final Duration STARTUP = Duration.ofSeconds(90);

  private static final Duration TAKE_OVER_BOUND = LEADERSHIP.takeOverBound();

  private static final String SETTINGS = "lanes = 2, batch-size = 100\n" + LEADERSHIP.polling();

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;
  private OutboxLoad stream;

  @Test
  @Tag("quick")
  void aStandbyTakesOverFromAFrozenActiveWhichWakesUpFenced() throws Exception {
    fx = relays.closeAfter(new RelayFixture("frozen_active"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    RelayProcess a = relays.startActive("a", fx.config(SETTINGS), STARTUP);
    RelayProcess b = relays.startStandby("b", fx.config(SETTINGS), STARTUP);
    stream = relays.closeAfter(OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(10)));
    await().atMost(STARTUP).until(() -> fx.published() >= 1_000);

    Instant frozenAt = Instant.now();
    a.freeze();
    await().atMost(Duration.ofSeconds(40)).until(() -> b.loggedAt(ACTIVE, frozenAt).isPresent());
    Duration takeOver = Duration.between(frozenAt, b.loggedAt(ACTIVE, frozenAt).orElseThrow());
    // A may commit a batch as the freeze lands: B's first is the first after B became active.
    Instant bActive = b.loggedAt(ACTIVE, frozenAt).orElseThrow();
    // B's first batch starts a Kafka producer, which on a loaded machine takes seconds and more
    // (not a matter of the leadership settings): awaited, and printed.
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.firstPublishedAfter(bActive) != null);
    Duration firstPublish = Duration.between(frozenAt, fx.firstPublishedAfter(bActive));
    fx.awaitPublishedBeyond(stream, 500);

    // The frozen instance wakes up in the middle of its work: it must stand down, fenced.
    RelayProcesses.thawAndAwaitLostActive(a);
    fx.awaitPublishedBeyond(stream, 500);
    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);

    Deliveries deliveries = fx.assertDeliveredInKeyOrder(committed);
    assertThat(takeOver).as("take-over after the freeze").isLessThan(TAKE_OVER_BOUND);
    assertThat(a.isAlive()).isTrue();
    assertThat(a.logContains(STANDING_BY)).as("the woken instance stands by").isTrue();
    System.out.printf(
        "FrozenActiveIT: SIGSTOP of the active; standby active after %d ms, first publication"
            + " after %d ms (take-over bound %d ms); %d events, %d duplicate(s)%n",
        takeOver.toMillis(),
        firstPublish.toMillis(),
        TAKE_OVER_BOUND.toMillis(),
        committed.size(),
        deliveries.duplicates());
  }

  @Test
  void withRabbitMqTooTheWokenInstancePublishesNothingOutOfOrder() throws Exception {
    RabbitFixture rx = new RabbitFixture("frozen_active_rabbit");
    fx = rx.fx;
    try {
      String queue = rx.bindQueue(rx.exchange("order"), "#");
      RelayProcess a = relays.startActive("a", rx.config(SETTINGS), STARTUP);
      RelayProcess b = relays.startStandby("b", rx.config(SETTINGS), STARTUP);
      stream = OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(10));
      await().atMost(STARTUP).until(() -> fx.published() >= 1_000);

      Instant frozenAt = Instant.now();
      a.freeze();
      await().atMost(Duration.ofSeconds(40)).until(() -> b.loggedAt(ACTIVE, frozenAt).isPresent());
      Duration takeOver = Duration.between(frozenAt, b.loggedAt(ACTIVE, frozenAt).orElseThrow());
      fx.awaitPublishedBeyond(stream, 500);
      RelayProcesses.thawAndAwaitLostActive(a);
      Set<UUID> committed = stream.stop();
      await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);

      java.util.List<com.rabbitmq.client.GetResponse> received =
          rx.read(queue, committed.size(), STARTUP);
      await().pollDelay(Duration.ofSeconds(1)).until(() -> true); // a late re-send shows up
      received.addAll(rx.drain(queue));
      Set<UUID> delivered = new java.util.HashSet<>();
      received.forEach(r -> delivered.add(UUID.fromString(r.getProps().getMessageId())));
      assertThat(delivered).containsAll(committed);
      RabbitCrashRecoveryIT.assertFirstDeliveriesInKeyOrder(received, fx.rowIds());
      assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
      assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts <> 0")).isZero();
      assertThat(takeOver).as("take-over after the freeze").isLessThan(TAKE_OVER_BOUND);
      System.out.printf(
          "FrozenActiveIT (RabbitMQ): standby active %d ms after SIGSTOP (bound %d ms); %d events,"
              + " %d duplicate(s)%n",
          takeOver.toMillis(),
          TAKE_OVER_BOUND.toMillis(),
          committed.size(),
          received.size() - delivered.size());
    } finally {
      if (stream != null) {
        stream.close();
        stream = null;
      }
      relays.killAll();
      rx.close();
      fx = null;
    }
  }
}
