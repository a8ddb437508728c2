package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.GetResponse;
import io.outbox.client.OutboxMessage;
import io.outbox.relay.Relay;
import io.outbox.relay.pipeline.PipelineStats;
import io.outbox.testkit.PrivateRabbit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * End to end against the shared RabbitMQ: the only queue bound to the exchange holds 5 messages
 * ({@code x-max-length = 5, x-overflow = reject-publish}), so the broker nacks everything beyond.
 * Back-pressure is not the events' fault: the pipeline pauses and probes with a growing hold,
 * counts no attempt and dead-letters nothing, and once a consumer drains the queue every event is
 * delivered.
 */
class RabbitBrokerLimitsIT {

  private RabbitFixture rx;
  private Relay relay;

  @AfterEach
  void tearDown() throws Exception {
    if (relay != null) {
      relay.close(Duration.ofSeconds(10));
    }
    if (rx != null) {
      rx.close();
    }
  }

  /**
   * The shared RabbitMQ: the only queue bound to the exchange holds 5 messages ({@code x-max-length
   * = 5, x-overflow = reject-publish}), so the broker nacks everything beyond.
   */
  @Test
  void aFullQueuePausesThePipelineWithoutAttemptsOrDeadLettersUntilItIsDrained() throws Exception {
    rx = new RabbitFixture("rabbitfullqueue");
    RelayFixture fx = rx.fx;
    String queue =
        rx.bindQueue(
            rx.exchange("order"), "#", Map.of("x-max-length", 5, "x-overflow", "reject-publish"));
    // max-attempts = 3 with 300 ms backoff (the fixture's): were a nack an attempt, the refused
    // events would be dead letters within a few seconds.
    relay = rx.start("lanes = 2, batch-size = 10");
    PipelineStats stats = relay.pipelines().get(0).stats();
    Set<UUID> committed = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      committed.addAll(fx.commit(List.of(event("k" + i % 5, i))));
    }

    await().atMost(Duration.ofSeconds(30)).until(() -> rx.depth(queue) == 5);
    await().atMost(Duration.ofSeconds(30)).until(() -> stats.sinkUnavailable() >= 1);
    long outagesBefore = stats.sinkUnavailable();
    // While the queue stays full: nothing charged, nothing dead-lettered, the rest unpublished.
    await()
        .during(Duration.ofSeconds(6))
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                fx.count("SELECT count(*) FROM outbox WHERE attempts > 0") == 0
                    && fx.count("SELECT count(*) FROM outbox_dead_letter") == 0
                    && fx.unpublished() == 15
                    && rx.depth(queue) == 5);
    long pauses = stats.sinkUnavailable() - outagesBefore;
    // The probe holds back 1, 2, 4 s... after each round of nacks: a few pauses in 6 s, not one
    // every reconnect-backoff (200 ms here).
    assertThat(pauses).as("pauses in 6 s of a full queue").isBetween(1L, 6L);
    assertThat(stats.retried()).isZero();

    // A consumer drains the queue: the refused events go out after the hold.
    List<GetResponse> received = rx.read(queue, committed.size(), Duration.ofSeconds(45));
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    received.addAll(rx.drain(queue));
    Set<UUID> delivered = new HashSet<>();
    List<UUID> all = new ArrayList<>();
    received.forEach(r -> all.add(UUID.fromString(r.getProps().getMessageId())));
    delivered.addAll(all);
    assertThat(delivered).isEqualTo(committed);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts > 0")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(stats.deadLettered()).isZero();
  }

  /** A private RabbitMQ node with {@code max_message_size = 1 MiB}. */
  @Test
  void anEventOverMaxMessageSizeIsTheOnlyDeadLetterAndNothingElseIsCharged() throws Exception {
    int max = 1024 * 1024;
    try (PrivateRabbit rabbit = PrivateRabbit.startPlain(List.of("max_message_size = " + max))) {
      rx = new RabbitFixture("rabbitmaxsize", rabbit.uri("127.0.0.1"));
      RelayFixture fx = rx.fx;
      String queue = rx.bindQueue(rx.exchange("order"), "#");
      relay = rx.start("lanes = 2, batch-size = 20");
      List<OutboxMessage> messages = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        messages.add(event("k" + i % 3, i));
        if (i == 10) {
          messages.add(
              OutboxMessage.builder()
                  .aggregate("order", "k" + i % 3)
                  .eventType("OrderUpdated")
                  .payload("\"" + "x".repeat(2 * max) + "\"")
                  .build());
        }
      }
      List<UUID> ids = fx.commit(messages); // one transaction: the big event mid-batch
      UUID big = ids.get(11);

      await()
          .atMost(Duration.ofSeconds(45))
          .until(
              () ->
                  fx.unpublished() == 0
                      && fx.count("SELECT count(*) FROM outbox_dead_letter") == 1);
      List<GetResponse> received = rx.read(queue, 40, Duration.ofSeconds(30));
      received.addAll(rx.drain(queue));
      Set<UUID> delivered = new HashSet<>();
      received.forEach(r -> delivered.add(UUID.fromString(r.getProps().getMessageId())));
      Set<UUID> healthy = new HashSet<>(ids);
      healthy.remove(big);
      assertThat(delivered).isEqualTo(healthy);
      assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts > 0"))
          .as("no healthy event charged")
          .isZero();
      RelayFixture.DeadLetter dead = fx.firstDeadLetter();
      assertThat(dead.eventId()).isEqualTo(big);
      assertThat(dead.reason()).isEqualTo("permanent");
      assertThat(dead.attempts()).isEqualTo(1);
      assertThat(dead.lastError())
          .startsWith(
              "exchange '"
                  + rx.exchange("order")
                  + "': message body of "
                  + (2 * max + 2)
                  + " bytes is larger than RabbitMQ's max_message_size of "
                  + max
                  + " bytes");
      relay.close(Duration.ofSeconds(10));
      relay = null;
      rx.close();
      rx = null;
    }
  }
}
