package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxMessage;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #13.8: one key held back by a retry while it keeps receiving events must not stall the
 * stream. Key {@code h}'s first row waits for its retry ({@code attempts} 1, {@code
 * next_attempt_at} ahead and moved on while other keys are pending, so that the hold outlasts the
 * writes however loaded the machine) while {@value #HELD} more events of {@code h} and {@value
 * #OTHERS} events of other keys are written; {@code h}'s events fill its lane buffer ({@value
 * #LANE_BUFFER}). The other keys must be published within seconds of the last commit (the code
 * before published none of the lane's keys while {@code h} was held); then a {@code kill -9} while
 * {@code h}'s events are out of memory, {@code h} released, and the next relay publishes
 * everything, in per-key order. The catch-up variant: the same rows are pending before the first
 * start, so the new slot's catch-up reads them and {@code h}'s fill its lane; the other keys must
 * still be published while {@code h} is held (the code before stopped the catch-up, and every key
 * behind it, until {@code h} was released).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CdcHeldKeyIT {
  private static final int HELD = 600;
  private static final int OTHERS = 4_000;
  private static final int LANE_BUFFER = 200;
  private static final int PER_TRANSACTION = 100;

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;

  @Test
  void otherKeysFlowWhileOneKeyIsHeldAndNothingIsLostAcrossKill9() throws Exception {
    String config = setUp("cdc_held_key");
    RelayProcess first = relays.start("first", config);
    await().atMost(Duration.ofSeconds(60)).until(() -> first.logContains(ACTIVE));

    // The producer and the topic's metadata ready first: the measurement is the stream's, not the
    // broker's first contact.
    List<UUID> committed = new ArrayList<>(fx.commit(List.of(RelayFixture.event("warm-up", 0))));
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    long held = holdKeyH();
    committed.add(eventId(held));
    long writing = System.nanoTime();
    committed.addAll(write());
    long written = System.nanoTime();
    double othersSeconds = othersPublishedWhileHeld(first, held, written);
    System.out.printf(
        "CdcHeldKeyIT: %d events of other keys written in %.1f s, all published %.1f s after the"
            + " last commit%n",
        OTHERS, (written - writing) / 1e9, othersSeconds);
    assertThat(othersSeconds).as("other keys published while h is held").isLessThan(15);

    // kill -9 while h's events are out of memory: the stored position did not pass them.
    recoversEverythingAfterKill9(first, held, config, committed, "streamed");
  }

  @Test
  void aCatchUpParksAHeldKeysRowsSoOtherKeysFlowAndNothingIsLostAcrossKill9() throws Exception {
    String config = setUp("cdc_held_catch_up");
    long held = holdKeyH();
    List<UUID> committed = new ArrayList<>(List.of(eventId(held)));
    committed.addAll(write()); // all pending before the slot exists: the catch-up reads them
    RelayProcess first = relays.start("first", config);
    await().atMost(Duration.ofSeconds(90)).until(() -> first.logContains(ACTIVE));
    double othersSeconds = othersPublishedWhileHeld(first, held, System.nanoTime());
    System.out.printf(
        "CdcHeldKeyIT: catch-up of %d events of other keys and %d of h: the others published %.1f"
            + " s after the activation%n",
        OTHERS, HELD + 1, othersSeconds);
    assertThat(
            fx.count(
                "SELECT count(*) FROM outbox_relay_offsets WHERE offset_key ="
                    + " convert_to('outbox-relay catch-up', 'UTF8') AND offset_value IS NOT NULL"))
        .as("the catch-up is not over while h's rows are parked")
        .isEqualTo(1);

    recoversEverythingAfterKill9(first, held, config, committed, "caught up");
  }

  /**
   * Waits until every event of the other keys is published while h stays held (its retry moved on),
   * checks that h's events were parked and none published; returns the seconds since {@code from}.
   */
  private double othersPublishedWhileHeld(RelayProcess relay, long held, long from)
      throws Exception {
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              moveRetry(held, "now() + interval '120 seconds'"); // h stays held meanwhile
              return pending("<> 'h'") == 0;
            });
    double seconds = (System.nanoTime() - from) / 1e9;
    assertThat(pending("= 'h'")).as("h is still held back").isEqualTo(HELD + 1);
    assertThat(relay.logContains("their newer events leave memory"))
        .as("h's events were parked")
        .isTrue();
    return seconds;
  }

  /**
   * Kills {@code relay} with -9 while h's events are parked, commits 5 more of h, releases h (the
   * next relay reads its row afresh) and checks that the next relay delivers everything, in key
   * order.
   */
  private void recoversEverythingAfterKill9(
      RelayProcess relay, long held, String config, List<UUID> committed, String variant)
      throws Exception {
    relay.kill9();
    committed.addAll(fx.commit(messages("h", 5, HELD + 1)));
    moveRetry(held, "now()");
    RelayProcess last = relays.start("last", config);
    await().atMost(Duration.ofSeconds(150)).until(() -> fx.unpublished() == 0);
    assertThat(last.terminate(Duration.ofSeconds(30))).contains(0);

    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    System.out.printf(
        "CdcHeldKeyIT: %s, after kill -9 with h parked: %d records for %d events, %d"
            + " duplicate(s)%n",
        variant, deliveries.records.size(), committed.size(), deliveries.duplicates());
  }

  /** The fixture on a new database {@code name}, the topic; returns the relay's config. */
  private String setUp(String name) throws Exception {
    fx = relays.closeAfter(new RelayFixture(name));
    KafkaTestSupport.createTopic(fx.topic("order"), 3);
    return fx.config(
        "lanes = 2, batch-size = 100\n%s".formatted(fx.cdc("lane-buffer = " + LANE_BUFFER)));
  }

  private long pending(String keyCondition) throws Exception {
    return fx.count(
        "SELECT count(*) FROM outbox WHERE published_at IS NULL AND aggregate_id " + keyCondition);
  }

  /**
   * Writes h's first row, waiting 120 s for its retry (the stream may lag the writes by many
   * seconds on a loaded machine); returns its id.
   */
  private long holdKeyH() throws Exception {
    return fx.count(
        "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, attempts,"
            + " next_attempt_at) VALUES ('order', 'h', 'OrderUpdated', '{\"seq\": 0}', 1,"
            + " now() + interval '120 seconds') RETURNING id");
  }

  /** Moves the retry of row {@code id} to {@code at} (SQL). */
  private void moveRetry(long id, String at) throws Exception {
    fx.count(
        "WITH u AS (UPDATE outbox SET next_attempt_at = "
            + at
            + " WHERE id = "
            + id
            + " RETURNING 1) SELECT count(*) FROM u");
  }

  private UUID eventId(long id) throws Exception {
    try (Connection c = fx.connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT event_id FROM outbox WHERE id = " + id)) {
      rs.next();
      return rs.getObject(1, UUID.class);
    }
  }

  /**
   * Commits {@link #OTHERS} events of 50 other keys and {@link #HELD} more of h, {@link
   * #PER_TRANSACTION} per transaction, as fast as the database takes them.
   */
  private List<UUID> write() throws Exception {
    List<UUID> ids = new ArrayList<>();
    int perTx = PER_TRANSACTION * HELD / (HELD + OTHERS);
    int h = 1;
    for (int i = 0; i < OTHERS; i += PER_TRANSACTION - perTx) {
      List<OutboxMessage> tx = new ArrayList<>();
      for (int j = 0; j < PER_TRANSACTION - perTx && i + j < OTHERS; j++) {
        tx.add(RelayFixture.event("k" + (i + j) % 50, i + j));
      }
      if (h <= HELD) {
        int n = Math.min(perTx, HELD - h + 1);
        tx.addAll(messages("h", n, h));
        h += n;
      }
      ids.addAll(fx.commit(tx));
    }
    if (h <= HELD) {
      ids.addAll(fx.commit(messages("h", HELD - h + 1, h)));
    }
    return ids;
  }

  private static List<OutboxMessage> messages(String key, int n, int from) {
    List<OutboxMessage> m = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      m.add(
          OutboxMessage.builder()
              .aggregate("order", key)
              .eventType("OrderUpdated")
              .payload("{\"seq\": " + (from + i) + "}")
              .build());
    }
    return m;
  }
}
