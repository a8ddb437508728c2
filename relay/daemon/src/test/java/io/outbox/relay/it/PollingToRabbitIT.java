package io.outbox.relay.it;

import static io.outbox.relay.it.RabbitFixture.header;
import static io.outbox.relay.it.RelayFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import io.outbox.client.OutboxMessage;
import io.outbox.relay.Relay;
import io.outbox.testkit.Rabbitmqctl;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** Polling source → RabbitMQ end to end, in-process, against the real services. */
class PollingToRabbitIT {
  /** The concurrent scenario commits at least this many events (issue 4). */
  private static final int COMMITTED_EVENTS = 10_000;

  private RabbitFixture rx;
  private Relay relay;

  private RabbitFixture fixture(TestInfo info) throws Exception {
    rx = new RabbitFixture(info.getTestMethod().orElseThrow().getName().toLowerCase());
    return rx;
  }

  @AfterEach
  void tearDown() throws Exception {
    if (relay != null) {
      relay.close(Duration.ofSeconds(10));
    }
    if (rx != null) {
      rx.close();
    }
  }

  @Test
  @Tag("quick")
  void deliversEveryCommittedEventToABoundQueueInKeyOrder(TestInfo info) throws Exception {
    long started = System.nanoTime();
    RelayFixture fx = fixture(info).fx;
    String queue = rx.bindQueue(rx.exchange("order"), "order.*");
    relay = rx.start("lanes = 4, batch-size = 200");

    OutboxLoad.Concurrent written = OutboxLoad.concurrent(fx, 8, 25, COMMITTED_EVENTS);
    Set<UUID> committed = written.committed();
    Set<UUID> rolledBack = written.rolledBack();
    assertThat(committed.size()).isGreaterThanOrEqualTo(COMMITTED_EVENTS);
    assertThat(rolledBack).isNotEmpty();

    await().atMost(Duration.ofSeconds(90)).until(() -> fx.unpublished() == 0);
    List<GetResponse> received = rx.read(queue, committed.size(), Duration.ofSeconds(30));
    // Give a duplicate, if any, the chance to show up.
    await().pollDelay(Duration.ofSeconds(1)).until(() -> true);
    received.addAll(rx.drain(queue));

    List<UUID> delivered = new ArrayList<>();
    Map<String, Long> lastRowByKey = new HashMap<>();
    Map<UUID, Long> rowIds = fx.rowIds();
    Set<UUID> seen = new HashSet<>();
    List<String> orderViolations = new ArrayList<>();
    for (GetResponse r : received) {
      AMQP.BasicProperties p = r.getProps();
      UUID id = UUID.fromString(p.getMessageId());
      delivered.add(id);
      assertThat(r.getEnvelope().getExchange()).isEqualTo(rx.exchange("order"));
      assertThat(r.getEnvelope().getRoutingKey()).isEqualTo("order.OrderUpdated");
      assertThat(p.getType()).isEqualTo("OrderUpdated");
      assertThat(p.getDeliveryMode()).isEqualTo(2);
      assertThat(p.getContentType()).isEqualTo("application/json");
      assertThat(p.getTimestamp()).isNotNull();
      assertThat(header(r, "event-id")).isEqualTo(p.getMessageId());
      assertThat(header(r, "event-type")).isEqualTo("OrderUpdated");
      assertThat(header(r, "aggregate-type")).isEqualTo("order");
      String key = header(r, "aggregate-id");
      assertThat(key).startsWith("w");
      Instant createdAt = Instant.parse(header(r, "created-at"));
      assertThat(createdAt).isBefore(Instant.now());
      assertThat(p.getTimestamp().toInstant()).isEqualTo(createdAt.truncatedTo(ChronoUnit.SECONDS));
      String seq = header(r, "seq");
      assertThat(new String(r.getBody(), StandardCharsets.UTF_8))
          .isEqualTo("{\"seq\": " + seq + "}");
      if (seen.add(id)) {
        Long rowId = rowIds.get(id);
        Long previous = lastRowByKey.put(key, rowId);
        if (previous != null && previous > rowId) {
          orderViolations.add("key " + key + ": row " + rowId + " after row " + previous);
        }
      }
    }
    int duplicates = delivered.size() - seen.size();
    assertThat(duplicates).as("duplicates (same message_id delivered twice)").isZero();
    assertThat(seen).isEqualTo(committed);
    assertThat(seen).doesNotContainAnyElementsOf(rolledBack);
    assertThat(orderViolations).as("per-key order of first deliveries").isEmpty();
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    System.out.printf(
        "concurrent IT: %d committed, %d rolled back, %d messages received, %d s%n",
        committed.size(),
        rolledBack.size(),
        delivered.size(),
        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));
  }

  @Test
  void anUnroutableEventIsDeadLetteredAsPermanentAndTheOthersDelivered(TestInfo info)
      throws Exception {
    RelayFixture fx = fixture(info).fx;
    String queue = rx.bindQueue(rx.exchange("order"), "order.OrderUpdated");
    String deadLetters = rx.bindQueue(rx.exchangePrefix + ".dlq", "#");
    relay = rx.start("dead-letter.destination = \"" + rx.exchangePrefix + ".dlq\"");

    UUID unroutable =
        fx.commit(
                List.of(
                    OutboxMessage.builder()
                        .aggregate("order", "lonely")
                        .eventType("NobodyListens")
                        .payload("{}")
                        .build()))
            .get(0);
    List<UUID> healthy = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      healthy.addAll(fx.commit(List.of(event("healthy-" + (i % 5), i))));
    }

    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> fx.count("SELECT count(*) FROM outbox_dead_letter") == 1);
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    List<GetResponse> received = rx.read(queue, healthy.size(), Duration.ofSeconds(10));
    received.addAll(rx.drain(queue));
    assertThat(received)
        .extracting(r -> UUID.fromString(r.getProps().getMessageId()))
        .containsExactlyInAnyOrderElementsOf(healthy);
    RelayFixture.DeadLetter dead = fx.firstDeadLetter();
    assertThat(dead.eventId()).isEqualTo(unroutable);
    assertThat(dead.reason()).isEqualTo("permanent");
    assertThat(dead.attempts()).isEqualTo(1);
    assertThat(dead.lastError())
        .isEqualTo(
            "unroutable: exchange '"
                + rx.exchange("order")
                + "' routing key 'order.NobodyListens' (no queue bound; 312 NO_ROUTE)");
    GetResponse copy = rx.read(deadLetters, 1, Duration.ofSeconds(10)).get(0);
    assertThat(copy.getProps().getMessageId()).isEqualTo(unroutable.toString());
    assertThat(header(copy, "dead-letter-reason")).isEqualTo("permanent");
    assertThat(header(copy, "dead-letter-attempts")).isEqualTo("1");
    assertThat(header(copy, "dead-letter-error")).startsWith("unroutable: exchange '");
  }

  @Test
  @Tag("exclusive") // stops and starts the shared RabbitMQ, which other RabbitMQ tests use
  void aRabbitRestartMidRunLosesNothingAndDeadLettersNothing(TestInfo info) throws Exception {
    RelayFixture fx = fixture(info).fx;
    String queue = rx.bindQueue(rx.exchange("order"), "#");
    relay = rx.start("lanes = 4, batch-size = 100");
    Set<UUID> committed;
    try (OutboxLoad load = OutboxLoad.stream(fx, 40, 5, Duration.ofMillis(5))) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL") >= 500);
      try {
        Rabbitmqctl.run(Duration.ofSeconds(90), "stop_app");
        int before = load.committedCount();
        // The application keeps writing while RabbitMQ is down.
        await().atMost(Duration.ofSeconds(30)).until(() -> load.committedCount() >= before + 300);
      } finally {
        Rabbitmqctl.run(Duration.ofSeconds(90), "start_app");
      }
      int afterRestart = load.committedCount();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> load.committedCount() >= afterRestart + 300);
      committed = load.stop();
    }

    await().atMost(Duration.ofSeconds(90)).until(() -> fx.unpublished() == 0);
    List<GetResponse> received = rx.read(queue, committed.size(), Duration.ofSeconds(30));
    await().pollDelay(Duration.ofSeconds(1)).until(() -> true);
    received.addAll(rx.drain(queue));
    Set<UUID> delivered = new HashSet<>();
    Map<String, Long> lastRowByKey = new HashMap<>();
    Map<UUID, Long> rowIds = fx.rowIds();
    List<String> orderViolations = new ArrayList<>();
    for (GetResponse r : received) {
      UUID id = UUID.fromString(r.getProps().getMessageId());
      if (delivered.add(id)) {
        String key = header(r, "aggregate-id");
        Long previous = lastRowByKey.put(key, rowIds.get(id));
        if (previous != null && previous > rowIds.get(id)) {
          orderViolations.add("key " + key + ": row " + rowIds.get(id) + " after row " + previous);
        }
      }
    }
    assertThat(delivered).as("every committed event, at least once").isEqualTo(committed);
    assertThat(orderViolations).as("per-key order of first deliveries").isEmpty();
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts > 0"))
        .as("an outage costs no attempts")
        .isZero();
    System.out.printf(
        "restart IT: %d committed, %d messages received, %d duplicates%n",
        committed.size(), received.size(), received.size() - delivered.size());
  }
}
