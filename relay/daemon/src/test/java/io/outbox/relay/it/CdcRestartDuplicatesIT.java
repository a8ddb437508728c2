package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxMessage;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #13.3: {@code kill -9} of a CDC relay while retries and delayed events hold its stored
 * stream position back. The restarted relay streams again everything after that position; events
 * whose rows were published meanwhile must not be sent again, and retried events continue with the
 * attempts their rows hold. Duplicates: at most the batches that were in flight (lanes × batch
 * size).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CdcRestartDuplicatesIT {
  private static final int EVENTS = 3_000;
  private static final int PER_TRANSACTION = 20;
  private static final int LANES = 2;
  private static final int BATCH = 100;

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;

  @Test
  void killDashNineSendsAgainOnlyTheBatchesInFlight() throws Exception {
    fx = relays.closeAfter(new RelayFixture("cdc_restart_dup"));
    KafkaTestSupport.createTopic(fx.topic("order"), 3);
    String config =
        fx.config(
            "lanes = %d, batch-size = %d\n%s".formatted(LANES, BATCH, fx.cdc(""))
                + "retry { max-attempts = 10, initial-backoff = 3s, max-backoff = 3s }\n"
                + "sink.kafka.producer.partitioner.class = \""
                + FlakyPartitioner.class.getName()
                + "\"\n");
    RelayProcess first = relays.start("first", config);
    await().atMost(Duration.ofSeconds(60)).until(() -> first.logContains(ACTIVE));

    CompletableFuture<List<UUID>> written = CompletableFuture.supplyAsync(this::write);
    fx.awaitPublishedMidway(EVENTS / 2);
    first.kill9();
    long atKill = fx.published();
    long retriedAtKill = fx.count("SELECT count(*) FROM outbox WHERE attempts > 0");

    RelayProcess last = relays.start("last", config);
    List<UUID> committed = written.get(60, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(90)).until(() -> fx.unpublished() == 0);
    assertThat(last.terminate(Duration.ofSeconds(30))).contains(0);

    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    long maxAttempts = fx.count("SELECT max(attempts) FROM outbox");
    System.out.printf(
        "CdcRestartDuplicatesIT: killed at %d of %d published (%d rows retried); %d records,"
            + " %d duplicate(s); highest attempts %d%n",
        atKill,
        EVENTS,
        retriedAtKill,
        deliveries.records.size(),
        deliveries.duplicates(),
        maxAttempts);
    assertThat(deliveries.duplicates())
        .as("duplicates after one kill -9: at most the batches in flight (lanes x batch-size)")
        .isLessThanOrEqualTo(LANES * BATCH);
    // Each process refuses a flaky event twice: attempts above that continued from the row's.
    assertThat(maxAttempts)
        .as("attempts carried across the restart")
        .isGreaterThan(FlakyPartitioner.FAILURES)
        .isLessThanOrEqualTo(2L * FlakyPartitioner.FAILURES);
  }

  /**
   * Commits {@link #EVENTS} events, {@link #PER_TRANSACTION} per transaction every 100 ms, on 20
   * keys; one in 100 is refused twice by the sink (it is retried after 3 s each time), one in 100
   * is delayed by 8 s (a delayed event holds no key back, so it has a key of its own; so has a
   * flaky one, which holds its key back for 6 s).
   */
  private List<UUID> write() {
    List<UUID> ids = new ArrayList<>(EVENTS);
    List<OutboxMessage> tx = new ArrayList<>();
    try {
      for (int i = 0; i < EVENTS; i++) {
        OutboxMessage.Builder m = OutboxMessage.builder().eventType("OrderUpdated");
        boolean flaky = i % 100 == 49;
        if (i % 100 == 99) {
          m.aggregate("order", "d" + i).availableAt(Instant.now().plusSeconds(8));
        } else {
          m.aggregate("order", flaky ? "f" + i : "k" + i % 20);
        }
        m.payload(flaky ? "{\"seq\": " + i + ", \"flaky\": true}" : "{\"seq\": " + i + "}");
        tx.add(m.build());
        if (tx.size() == PER_TRANSACTION) {
          ids.addAll(fx.commit(tx));
          tx.clear();
          // Pacing, not waiting for a condition: the stream's rate.
          TimeUnit.MILLISECONDS.sleep(100);
        }
      }
      return ids;
    } catch (Exception e) {
      throw new IllegalStateException("writing the stream failed", e);
    }
  }
}
