package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.schema.OutboxMessage;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #13.8: one key held back by a retry while it keeps receiving events must not stall the
 * stream. Key {@code h}'s first event is refused twice by the sink (retried after 15 s each time)
 * while {@value #HELD} more events of {@code h} and {@value #OTHERS} events of other keys are
 * written; {@code h}'s events fill its lane buffer ({@value #LANE_BUFFER}) long before it is
 * released. The other keys must be published within seconds, not after the hold; then a {@code kill
 * -9} while {@code h}'s events are out of memory, and the next relay publishes everything, in
 * per-key order.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CdcHeldKeyIT {
  private static final String ACTIVE = "pipeline it: active, ";
  private static final int HELD = 600;
  private static final int OTHERS = 4_000;
  private static final int LANE_BUFFER = 200;
  private static final int PER_TRANSACTION = 100;

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;

  @AfterEach
  void tearDown() {
    relays.killAll();
    if (fx != null) {
      fx.close();
    }
  }

  @Test
  void otherKeysFlowWhileOneKeyIsHeldAndNothingIsLostAcrossKill9() throws Exception {
    fx = new RelayFixture("cdc_held_key");
    KafkaTestSupport.createTopic(fx.topic("order"), 3);
    String config =
        fx.config(
            "lanes = 2, batch-size = 100\n%s".formatted(fx.cdc("lane-buffer = " + LANE_BUFFER))
                + "retry { max-attempts = 10, initial-backoff = 15s, max-backoff = 15s }\n"
                + "sink.kafka.producer.partitioner.class = \""
                + FlakyPartitioner.class.getName()
                + "\"\n");
    RelayProcess first = relays.start("first", config);
    await().atMost(Duration.ofSeconds(60)).until(() -> first.logContains(ACTIVE));

    // The producer and the topic's metadata ready first: the measurement is the stream's, not the
    // broker's first contact.
    List<UUID> committed = new ArrayList<>(fx.commit(List.of(RelayFixture.event("warm-up", 0))));
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    long writing = System.nanoTime();
    committed.addAll(write());
    long written = System.nanoTime();
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> pending("<> 'h'") == 0);
    double othersSeconds = (System.nanoTime() - written) / 1e9;
    long heldPending = pending("= 'h'");
    System.out.printf(
        "CdcHeldKeyIT: %d events of other keys written in %.1f s, all published %.1f s after the"
            + " last commit, %d of key h still pending%n",
        OTHERS, (written - writing) / 1e9, othersSeconds, heldPending);
    assertThat(heldPending).as("h is still held back (the hold lasts 30 s)").isEqualTo(HELD + 1);
    assertThat(first.logContains("their newer events leave memory"))
        .as("h's events were parked")
        .isTrue();
    assertThat(othersSeconds)
        .as("other keys published while h is held (not after its 30 s hold)")
        .isLessThan(15);

    // kill -9 while h's events are out of memory: the stored position did not pass them.
    first.kill9();
    committed.addAll(fx.commit(messages("h", 5, HELD + 1, false)));
    RelayProcess last = relays.start("last", config);
    await().atMost(Duration.ofSeconds(150)).until(() -> fx.unpublished() == 0);
    assertThat(last.terminate(Duration.ofSeconds(30))).contains(0);

    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    System.out.printf(
        "CdcHeldKeyIT: after kill -9 with h parked: %d records for %d events, %d duplicate(s);"
            + " read back: %s%n",
        deliveries.records.size(),
        committed.size(),
        deliveries.duplicates(),
        last.logContains("parked event(s) were read back"));
  }

  private long pending(String keyCondition) throws Exception {
    return fx.count(
        "SELECT count(*) FROM outbox WHERE published_at IS NULL AND aggregate_id " + keyCondition);
  }

  /**
   * Commits h's flaky first event, then {@link #OTHERS} events of 50 other keys and {@link #HELD}
   * more of h, {@link #PER_TRANSACTION} per transaction, as fast as the database takes them.
   */
  private List<UUID> write() throws Exception {
    List<UUID> ids = new ArrayList<>(fx.commit(messages("h", 1, 0, true)));
    int perTx = PER_TRANSACTION * HELD / (HELD + OTHERS);
    int h = 1;
    for (int i = 0; i < OTHERS; i += PER_TRANSACTION - perTx) {
      List<OutboxMessage> tx = new ArrayList<>();
      for (int j = 0; j < PER_TRANSACTION - perTx && i + j < OTHERS; j++) {
        tx.add(RelayFixture.event("k" + (i + j) % 50, i + j));
      }
      if (h <= HELD) {
        int n = Math.min(perTx, HELD - h + 1);
        tx.addAll(messages("h", n, h, false));
        h += n;
      }
      ids.addAll(fx.commit(tx));
    }
    if (h <= HELD) {
      ids.addAll(fx.commit(messages("h", HELD - h + 1, h, false)));
    }
    return ids;
  }

  private static List<OutboxMessage> messages(String key, int n, int from, boolean flaky) {
    List<OutboxMessage> m = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      m.add(
          OutboxMessage.builder()
              .aggregate("order", key)
              .eventType("OrderUpdated")
              .payload("{\"seq\": " + (from + i) + (flaky ? ", \"flaky\": true}" : "}"))
              .build());
    }
    return m;
  }
}
