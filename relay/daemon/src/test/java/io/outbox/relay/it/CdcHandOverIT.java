package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
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
 * engine in the middle of reconnecting; then the roles swap again. The woken instance must stop its
 * engine for good, so that it never takes the slot back from the new active, which must keep
 * publishing; every event is delivered and first deliveries stay in per-key order.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class CdcHandOverIT {
  private static final String STANDING_BY = "pipeline it: another instance streams slot";
  private static final String DEMOTED = "pipeline it: no longer the active instance, standing by";

  /** Longer than a take-over (about 12 s) plus the new active's catch-up, on a busy machine. */
  private static final Duration LATE = Duration.ofSeconds(25);

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;
  private OutboxLoad stream;

  @Test
  void aWokenActiveNeverTakesTheSlotBackAndNothingIsLostOrReordered() throws Exception {
    fx = relays.closeAfter(new RelayFixture("cdc_handover"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    // Default lease-timeout (10 s) and reconcile-after (5 min): the sweep cannot hide a stream
    // that stopped.
    String config = fx.config("lanes = 4, batch-size = 500\n" + fx.cdc(""));
    RelayProcess active = relays.start("a", config);
    await().atMost(Duration.ofSeconds(60)).until(() -> active.logContains(ACTIVE));
    RelayProcess standby = relays.start("b", config);
    await().atMost(Duration.ofSeconds(60)).until(() -> standby.logContains(STANDING_BY));
    stream = relays.closeAfter(OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(20)));
    // The first sends to a new topic may take a while on a busy broker.
    await().atMost(Duration.ofSeconds(90)).until(() -> fx.published() >= 500);

    List<String> rounds = new ArrayList<>();
    RelayProcess frozen = active;
    RelayProcess next = standby;
    for (int round = 1; round <= 3; round++) {
      Instant frozenAt = Instant.now();
      frozen.freeze(); // its leader session and replication connection stay open
      RelayProcess taking = next;
      await()
          .atMost(Duration.ofSeconds(40))
          .until(() -> taking.loggedAt(ACTIVE, frozenAt).isPresent());
      Duration takeOver = Duration.between(frozenAt, taking.loggedAt(ACTIVE, frozenAt).get());
      long committedNow = stream.committedCount();
      await().atMost(Duration.ofSeconds(60)).until(() -> fx.published() >= committedNow + 200);

      Instant thawedAt = Instant.now();
      frozen.thaw(); // its engine finds its replication connection ended and reconnects
      RelayProcess woken = frozen;
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> woken.loggedAt(DEMOTED, thawedAt).isPresent());
      // Longer than the old engine's reconnection attempts (30 x 1 s, after a 2 s restart wait):
      // the new active keeps publishing all along.
      await()
          .during(Duration.ofSeconds(40))
          .atMost(Duration.ofSeconds(50))
          .pollInterval(Duration.ofSeconds(1))
          .until(() -> late() == 0);
      rounds.add(
          "round %d: %s active %d ms after SIGSTOP of %s"
              .formatted(round, taking.name(), takeOver.toMillis(), woken.name()));
      frozen = taking;
      next = woken;
    }

    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    Deliveries deliveries = fx.assertDeliveredInKeyOrder(committed);
    System.out.printf(
        "CdcHandOverIT: %s; %d events, %d duplicate(s)%n",
        rounds, committed.size(), deliveries.duplicates());
  }

  /** Committed rows still unpublished {@link #LATE} after their transaction began. */
  private long late() throws Exception {
    return fx.count(
        "SELECT count(*) FROM outbox WHERE published_at IS NULL AND created_at < now() - interval '"
            + LATE.toSeconds()
            + " seconds'");
  }
}
