package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The CDC source with real relay processes: {@code kill -9} mid-stream loses nothing, a standby
 * takes over within seconds (from a frozen active too, at least once and exactly once: the woken
 * one is fenced), and a slot dropped while the relay is down is a loud error — and, once an
 * operator allows a new slot, its catch-up still delivers every row.
 *
 * <p>The tests that wait for a lease to expire scale it down ({@link Leadership#FAST}) and check
 * the take-over against the bound those settings imply.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CdcFailoverIT {
  private static final String STANDING_BY = "pipeline it: another instance streams slot";
  private static final Leadership LEADERSHIP = Leadership.FAST;

  /**
   * What the CDC source logs once it took the slot over: the take-over the lease settings promise.
   * Exactly once, the pipeline is active only after that, once its lanes registered their
   * transactional producers and read the ledger (seconds of Kafka round trips on a busy broker).
   */
  private static final String TOOK_OVER = "pipeline it: this instance is now the active one";

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;
  private OutboxLoad stream;

  private String config(String cdcExtra) {
    return config(cdcExtra, "");
  }

  /** The pipeline with {@code extra} (e.g. {@link RelayFixture#exactlyOnce()}) merged in. */
  private String config(String cdcExtra, String extra) {
    return fx.config("lanes = 4, batch-size = 500\n" + fx.cdc(cdcExtra) + extra);
  }

  /** Starts two relays at once: returns the one that took the lease, then the one standing by. */
  private RelayProcess[] startPair(String config) {
    return relays.startPair(config, STANDING_BY, Duration.ofSeconds(60));
  }

  @Test
  void killDashNineMidStreamLosesNothing() throws Exception {
    fx = relays.closeAfter(new RelayFixture("cdc_crash"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    // The next relay waits for the killed one's lease to expire: a scaled-down lease.
    String config = config(LEADERSHIP.settings());
    RelayProcess first = relays.startActive("crashing", config, Duration.ofSeconds(60));
    // Many times the batches in flight (4 lanes x 500).
    int events = 5_000;
    List<UUID> committed = OutboxLoad.backlog(fx, events, 100);
    fx.awaitPublishedMidway(events * 3 / 10);
    first.kill9();
    Instant killedAt = Instant.now();
    long atKill = fx.published();
    assertThat(atKill).as("killed in the middle of the stream").isLessThan(events);

    relays.finish("finishing", config, fx);
    long lastPublished =
        fx.count("SELECT (extract(epoch FROM max(published_at)) * 1000)::bigint FROM outbox");
    Duration finished = Duration.ofMillis(lastPublished - killedAt.toEpochMilli());

    Deliveries deliveries = fx.assertDeliveredInKeyOrder(committed);
    System.out.printf(
        "CdcFailoverIT: killed at %d of %d published, every row published %d ms after the kill;"
            + " %d records, %d duplicate(s)%n",
        atKill, events, finished.toMillis(), deliveries.records.size(), deliveries.duplicates());
  }

  @Test
  void standbyTakesOverWithinSecondsAfterKill9() throws Exception {
    fx = relays.closeAfter(new RelayFixture("cdc_standby"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    String config = config(LEADERSHIP.settings());
    RelayProcess[] pair = startPair(config);
    RelayProcess a = pair[0];
    RelayProcess b = pair[1];
    stream = relays.closeAfter(OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(10)));
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.published() >= 500);
    assertThat(b.log()).doesNotContain(ACTIVE);

    Instant killedAt = Instant.now();
    a.kill9();
    await()
        .atMost(LEADERSHIP.takeOverBound().plusSeconds(30))
        .until(() -> b.loggedAt(ACTIVE, killedAt).isPresent());
    Duration takeOver = Duration.between(killedAt, b.loggedAt(ACTIVE, killedAt).orElseThrow());
    long committedNow = stream.committedCount();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.published() >= committedNow + 200);
    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);

    // The lease's expiry, then the engine's start (connect, check the slot, start streaming): 2-3 s
    // on an idle machine, more when the test machine is busy.
    assertThat(takeOver).as("take-over after kill -9").isLessThan(LEADERSHIP.takeOverBound());
    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    System.out.printf(
        "CdcFailoverIT: standby took over %d ms after kill -9 (bound %d ms); %d events, %d"
            + " duplicate(s)%n",
        takeOver.toMillis(),
        LEADERSHIP.takeOverBound().toMillis(),
        committed.size(),
        deliveries.duplicates());
  }

  /**
   * At least once the standby's stream delivers again what the frozen one published after the
   * slot's confirmed position (16-24 duplicates in the runs of docs/reliability/cdc.md); exactly
   * once (issue #14) the standby fenced the frozen one's transactional producers on activation and
   * settled its committed batches from the ledger, so a {@code read_committed} consumer sees none.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"at-least-once", "exactly-once"})
  void standbyTakesOverFromAFrozenActiveAndTheWokenOneCannotSettle(String delivery)
      throws Exception {
    boolean exactlyOnce = delivery.equals("exactly-once");
    fx = relays.closeAfter(new RelayFixture(exactlyOnce ? "cdc_frozen_eos" : "cdc_frozen"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    // A scaled-down lease: the frozen one's expires sooner, the same way.
    String config = config(LEADERSHIP.settings(), exactlyOnce ? fx.exactlyOnce() : "");
    RelayProcess[] pair = startPair(config);
    RelayProcess a = pair[0];
    RelayProcess b = pair[1];
    stream = relays.closeAfter(OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(10)));
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.published() >= 500);

    Instant frozenAt = Instant.now();
    a.freeze(); // its leader session and replication connection stay open
    await()
        .atMost(LEADERSHIP.takeOverBound().plusSeconds(30))
        .until(() -> b.loggedAt(ACTIVE, frozenAt).isPresent());
    Duration takeOver = Duration.between(frozenAt, b.loggedAt(TOOK_OVER, frozenAt).orElseThrow());
    Duration active = Duration.between(frozenAt, b.loggedAt(ACTIVE, frozenAt).orElseThrow());
    long committedNow = stream.committedCount();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.published() >= committedNow + 200);
    Duration publishing = Duration.between(frozenAt, Instant.now());

    a.thaw();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> a.logContains("pipeline it: no longer the active instance, standing by"));
    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);

    assertThat(takeOver).as("take-over after SIGSTOP").isLessThan(LEADERSHIP.takeOverBound());
    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    if (exactlyOnce) {
      assertThat(deliveries.duplicates())
          .as(() -> "duplicates seen by a read_committed consumer: " + deliveries.duplicateCopies())
          .isZero();
      // The same transactional ids as the frozen one's: registering them fenced its producers.
      assertThat(b.loggedAt("registered (earlier holders fenced)", frozenAt))
          .as("the standby fenced the frozen instance's producers on activation")
          .isPresent();
    }
    assertThat(a.isAlive()).as("the woken instance stands by, it does not exit").isTrue();
    System.out.printf(
        "CdcFailoverIT: %s: standby took the slot over %d ms after SIGSTOP (bound %d ms), its"
            + " pipeline active after %d ms, publishing again within %d ms; %d events, %d"
            + " duplicate(s); the woken one's commit fenced: %s, its offset commits refused: %s%n",
        delivery,
        takeOver.toMillis(),
        LEADERSHIP.takeOverBound().toMillis(),
        active.toMillis(),
        publishing.toMillis(),
        committed.size(),
        deliveries.duplicates(),
        a.logContains("fenced by another instance"),
        a.logContains("is no longer current"));
  }

  @Test
  void slotDroppedWhileDownIsALoudErrorAndTheCatchUpStillDeliversEveryRow() throws Exception {
    fx = relays.closeAfter(new RelayFixture("cdc_slot_lost"));
    KafkaTestSupport.createTopic(fx.topic("order"), 3);
    RelayProcess first = relays.start("first", config(""));
    await().atMost(Duration.ofSeconds(60)).until(() -> first.logContains(ACTIVE));
    List<UUID> committed = new ArrayList<>(OutboxLoad.backlog(fx, 50, 5));
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    assertThat(first.terminate(Duration.ofSeconds(30))).contains(0);

    fx.count("SELECT count(*) FROM (SELECT pg_drop_replication_slot('" + fx.db.name() + "')) d");
    committed.addAll(OutboxLoad.backlog(fx, 50, 5)); // in no slot's stream

    RelayProcess refused = relays.start("refused", config(""));
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> refused.logContains("replication slot " + fx.db.name() + " is missing while"));
    assertThat(refused.log()).contains("outbox_relay_offsets").doesNotContain(ACTIVE);
    assertThat(fx.slotConfirmedLsn()).as("no new slot behind the operator's back").isEqualTo(-1);
    assertThat(fx.unpublished()).isEqualTo(50);
    refused.kill9();

    RelayProcess recreating =
        relays.start("recreating", config("on-slot-loss = recreate, reconcile-after = 1s"));
    await().atMost(Duration.ofSeconds(60)).until(() -> recreating.logContains(ACTIVE));
    committed.addAll(OutboxLoad.backlog(fx, 20, 5)); // streamed by the new slot
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    assertThat(recreating.log())
        .contains("on-slot-loss = recreate")
        .contains("to publish ahead of its stream");

    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    assertThat(new HashSet<>(deliveries.eventIds())).hasSize(120);
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
  }
}
