package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CDC hand-overs back to back under a steady stream (soak findings F1 and F3): the active relay is
 * frozen (SIGSTOP), the standby takes over, the frozen one wakes up (SIGCONT) with its Debezium
 * engine in the middle of reconnecting; then the roles swap back: the instance woken first takes
 * over again. The woken instance must stop its engine for good, so that it never takes the slot
 * back from the new active, which must keep publishing, and must be able to become the active one
 * again; every event is delivered and first deliveries stay in per-key order.
 *
 * <p>The lease is scaled down ({@link Leadership#FAST}) and so are the woken engine's reconnection
 * attempts (the connector's restart wait and its slot retries, which the relay sets only when the
 * pipeline's {@code debezium} properties do not): the same reconnection path, over seconds instead
 * of half a minute, so that the window watching the new active can cover all of it.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class CdcHandOverIT {
  private static final String STANDING_BY = "pipeline it: another instance streams slot";
  private static final String DEMOTED = "pipeline it: no longer the active instance, standing by";

  private static final Leadership LEADERSHIP = Leadership.FAST;

  /** The woken engine's wait before it restarts its connector after the lost connection. */
  private static final Duration RESTART_WAIT = Duration.ofSeconds(1);

  /** How often, and how far apart, the restarted connector tries to acquire the slot. */
  private static final int SLOT_RETRIES = 5;

  private static final Duration SLOT_RETRY_DELAY = Duration.ofMillis(500);

  /** The woken engine's whole reconnection: the restart wait, then every slot attempt. */
  private static final Duration RECONNECTION =
      RESTART_WAIT.plus(SLOT_RETRY_DELAY.multipliedBy(SLOT_RETRIES));

  /**
   * Longer than the new active's publishing takes on a busy machine once it has caught up (the
   * window starts after it published 200 events beyond the take-over; a row is published within 0.1
   * s on an idle one), and shorter than the 30 s after which a stalled stream is restarted: a
   * stream that stopped shows as late rows first.
   */
  private static final Duration LATE = Duration.ofSeconds(8);

  /**
   * How long the new active must keep the slot (the same walsender streams it) and keep publishing
   * after a wake: the whole reconnection of the woken engine, and then long enough for rows
   * committed at its end to count as late (plus the polling of the check).
   */
  private static final Duration WATCH = RECONNECTION.plus(LATE).plus(Duration.ofSeconds(2));

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;
  private OutboxLoad stream;

  @Test
  void aWokenActiveNeverTakesTheSlotBackAndNothingIsLostOrReordered() throws Exception {
    Instant started = Instant.now();
    fx = relays.closeAfter(new RelayFixture("cdc_handover"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    // A scaled-down lease, and the default reconcile-after (5 min): the sweep cannot hide a stream
    // that stopped.
    String config =
        fx.config(
            "lanes = 4, batch-size = 500\n"
                + fx.cdc(
                    LEADERSHIP.settings()
                        + ", debezium { \"retriable.restart.connector.wait.ms\" = %d,"
                            .formatted(RESTART_WAIT.toMillis())
                        + " \"slot.max.retries\" = %d, \"slot.retry.delay.ms\" = %d }"
                            .formatted(SLOT_RETRIES, SLOT_RETRY_DELAY.toMillis())));
    // Both started at once: whichever takes the lease is the active one, the other stands by.
    RelayProcess[] pair = relays.startPair(config, STANDING_BY, Duration.ofSeconds(60));
    RelayProcess active = pair[0];
    RelayProcess standby = pair[1];
    stream = relays.closeAfter(OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(20)));
    // The first sends to a new topic may take a while on a busy broker.
    await().atMost(Duration.ofSeconds(90)).until(() -> fx.published() >= 500);
    Duration setUp = Duration.between(started, Instant.now());

    List<String> rounds = new ArrayList<>();
    RelayProcess frozen = active;
    RelayProcess next = standby;
    // Round 1: a to b; round 2: back to a, woken in round 1 (its engine stopped for good, it can
    // be the active instance again), and b is the woken one. A third round would repeat round 2
    // with the roles swapped.
    for (int round = 1; round <= 2; round++) {
      Instant frozenAt = Instant.now();
      frozen.freeze(); // its leader session and replication connection stay open
      RelayProcess taking = next;
      await()
          .atMost(LEADERSHIP.takeOverBound().plusSeconds(20))
          .until(() -> taking.loggedAt(ACTIVE, frozenAt).isPresent());
      Duration takeOver = Duration.between(frozenAt, taking.loggedAt(ACTIVE, frozenAt).get());
      assertThat(takeOver)
          .as("round %d: take-over after SIGSTOP", round)
          .isLessThan(LEADERSHIP.takeOverBound());
      long committedNow = stream.committedCount();
      await().atMost(Duration.ofSeconds(60)).until(() -> fx.published() >= committedNow + 200);
      // The walsender streaming the slot to the new active instance.
      long walsender = slotHolder();
      assertThat(walsender).as("round %d: the slot is streamed", round).isNotZero();

      Instant thawedAt = Instant.now();
      frozen.thaw(); // its engine finds its replication connection ended and reconnects
      RelayProcess woken = frozen;
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> woken.loggedAt(DEMOTED, thawedAt).isPresent());
      Duration demoted = Duration.between(thawedAt, woken.loggedAt(DEMOTED, thawedAt).get());
      // Longer than the woken engine's reconnection attempts and then LATE: the new active keeps
      // the slot and keeps publishing all along.
      await()
          .during(WATCH)
          .atMost(WATCH.plusSeconds(10))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> slotHolder() == walsender && late() == 0);
      rounds.add(
          ("round %d: %s active %d ms after SIGSTOP of %s (bound %d ms), which stood by %d ms"
                  + " after SIGCONT; walsender %d kept the slot")
              .formatted(
                  round,
                  taking.name(),
                  takeOver.toMillis(),
                  woken.name(),
                  LEADERSHIP.takeOverBound().toMillis(),
                  demoted.toMillis(),
                  walsender));
      frozen = taking;
      next = woken;
    }

    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    Deliveries deliveries = fx.assertDeliveredInKeyOrder(committed);
    System.out.printf(
        "CdcHandOverIT: set up in %d ms; %s; each then watched %d ms (reconnection %d ms, late"
            + " after %d ms); %d events, %d duplicate(s); %d ms in all%n",
        setUp.toMillis(),
        rounds,
        WATCH.toMillis(),
        RECONNECTION.toMillis(),
        LATE.toMillis(),
        committed.size(),
        deliveries.duplicates(),
        Duration.between(started, Instant.now()).toMillis());
  }

  /** The process id of the walsender streaming the test's slot; 0 when none does. */
  private long slotHolder() throws Exception {
    return fx.count(
        "SELECT coalesce(max(active_pid), 0) FROM pg_replication_slots WHERE slot_name = '"
            + fx.db.name()
            + "'");
  }

  /** Committed rows still unpublished {@link #LATE} after their transaction began. */
  private long late() throws Exception {
    return fx.count(
        "SELECT count(*) FROM outbox WHERE published_at IS NULL AND created_at < now() - interval '"
            + LATE.toSeconds()
            + " seconds'");
  }
}
