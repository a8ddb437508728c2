package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SIGTERM of a relay process: in-flight batches finish and are recorded, the process exits 0 within
 * {@code shutdown-timeout}, and nothing is left half-done: a row is marked published exactly when
 * its event is on the topic.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class GracefulShutdownIT {
  /**
   * The backlog of the short shutdown-timeout test: more than its four lanes can have in flight
   * (batches of 2,500, each lane with one claimed ahead), so that the stop lands mid-backlog.
   */
  private static final int EVENTS = 30_000;

  /**
   * The backlog of the graceful stop, at a fifth of which it is stopped: well more than is
   * published past that fifth until the process exits (in-flight and claimed-ahead batches of its
   * four lanes of 500, and what is published while the signal arrives: 5,500 in a measured run).
   */
  private static final int DRAIN_EVENTS = 15_000;

  private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(15); // RelayFixture's
  private static final Duration JVM_MARGIN = Duration.ofSeconds(5);

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;

  @Test
  void sigtermFinishesInFlightWorkAndExitsZero() throws Exception {
    fx = relays.closeAfter(new RelayFixture("graceful_shutdown"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    List<UUID> committed = OutboxLoad.backlog(fx, DRAIN_EVENTS, 300);
    String config = fx.config("lanes = 4, batch-size = 500");
    RelayProcess draining = relays.start("draining", config);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> published() >= DRAIN_EVENTS / 5);

    long start = System.nanoTime();
    assertThat(draining.terminate(SHUTDOWN_TIMEOUT.plus(JVM_MARGIN)))
        .as("exit code after SIGTERM")
        .contains(0);
    Duration stopTime = Duration.ofNanos(System.nanoTime() - start);
    assertThat(draining.log())
        .contains("outbox-relay stopping", "pipeline it: stopped", "outbox-relay stopped")
        .doesNotContain("did not finish", "claims still open", "ERROR [", "\tat ");

    Set<UUID> marked = publishedEventIds();
    assertThat(marked.size()).as("stopped in the middle of the backlog").isLessThan(DRAIN_EVENTS);
    Deliveries afterStop = Deliveries.readAll(fx.topic("order"));
    assertThat(afterStop.eventIds())
        .as("a clean stop finishes and records its batches: on the topic exactly when marked")
        .isEqualTo(marked);
    assertThat(afterStop.duplicates()).isZero();

    RelayProcess resuming = relays.start("resuming", config);
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    assertThat(resuming.terminate(SHUTDOWN_TIMEOUT.plus(JVM_MARGIN))).contains(0);
    Deliveries all = Deliveries.readAll(fx.topic("order"));
    all.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    assertThat(all.duplicates()).as("no crash, no duplicate").isZero();
    RelayFixture.assertFirstDeliveriesInKeyOrder(all.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts <> 0")).isZero();
    System.out.printf(
        "GracefulShutdownIT: SIGTERM after %d of %d events, exit 0 in %d ms%n",
        marked.size(), DRAIN_EVENTS, stopTime.toMillis());
  }

  @Test
  void sigtermWithAShortShutdownTimeoutExitsZeroInTimeAndLeavesNothingHalfMarked()
      throws Exception {
    fx = relays.closeAfter(new RelayFixture("short_shutdown"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    List<UUID> committed = OutboxLoad.backlog(fx, EVENTS, 300);
    // Big batches and a stop deadline shorter than a batch may take: in-flight batches may have
    // to be abandoned (released unmarked, their events possibly already on the topic).
    String config =
        fx.config("lanes = 4, batch-size = 2500")
            .replace("shutdown-timeout = 15s", "shutdown-timeout = 500ms");
    RelayProcess draining = relays.start("draining", config);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> published() > 0); // the first batch is in, the others are in flight

    long start = System.nanoTime();
    assertThat(draining.terminate(Duration.ofMillis(500).plus(JVM_MARGIN)))
        .as("exit code after SIGTERM")
        .contains(0);
    Duration stopTime = Duration.ofNanos(System.nanoTime() - start);
    Set<UUID> marked = publishedEventIds();
    assertThat(marked.size()).as("stopped in the middle of the backlog").isLessThan(EVENTS);
    assertThat(Deliveries.readAll(fx.topic("order")).eventIds())
        .as("every row marked published is on the topic")
        .containsAll(marked);

    RelayProcess resuming = relays.start("resuming", config);
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    assertThat(resuming.terminate(Duration.ofMillis(500).plus(JVM_MARGIN))).contains(0);
    Deliveries all = Deliveries.readAll(fx.topic("order"));
    all.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(all.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts <> 0")).isZero();
    System.out.printf(
        "GracefulShutdownIT: shutdown-timeout 500ms: exit 0 in %d ms, %d duplicate(s)%n",
        stopTime.toMillis(), all.duplicates());
  }

  @Test
  void sigtermOfAStandbyExitsZeroPromptly() throws Exception {
    fx = relays.closeAfter(new RelayFixture("standby_shutdown"));
    KafkaTestSupport.createTopic(fx.topic("order"), 2);
    RelayProcess active = relays.start("active", fx.config(""));
    await().atMost(Duration.ofSeconds(30)).until(() -> active.logContains("pipeline it: active, "));
    RelayProcess standby = relays.start("standby", fx.config(""));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> standby.logContains("pipeline it: another instance is active for"));

    long start = System.nanoTime();
    // Well under shutdown-timeout: a standby has nothing to finish; one that waited out the
    // deadline would miss it.
    Duration promptly = SHUTDOWN_TIMEOUT.dividedBy(2);
    assertThat(standby.terminate(promptly)).as("exit code after SIGTERM").contains(0);
    Duration stopTime = Duration.ofNanos(System.nanoTime() - start);
    assertThat(standby.log())
        .contains("outbox-relay stopped")
        .doesNotContain("pipeline it: active, ", "ERROR [", "\tat ");

    // The active instance carries on.
    List<UUID> ids = OutboxLoad.backlog(fx, 100, 10);
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    assertThat(Deliveries.readAll(fx.topic("order")).eventIds()).isEqualTo(new HashSet<>(ids));
    assertThat(active.terminate(SHUTDOWN_TIMEOUT.plus(JVM_MARGIN))).contains(0);
    System.out.printf(
        "GracefulShutdownIT: standby exit 0 in %d ms (bound %d ms)%n",
        stopTime.toMillis(), promptly.toMillis());
  }

  @Test
  void sigtermDuringStartUpStopsCleanlyAndExitsZero() throws Exception {
    fx = relays.closeAfter(new RelayFixture("startup_shutdown"));
    RelayProcess relay = relays.start("starting", fx.config(""));
    // The pipelines start before the rest of the daemon (HTTP endpoints): signal in between.
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(2))
        .until(() -> relay.logContains("pipeline it: waiting to become the active instance"));

    assertThat(relay.terminate(SHUTDOWN_TIMEOUT.plus(JVM_MARGIN)))
        .as("exit code after SIGTERM")
        .contains(0);
    assertThat(relay.log())
        .contains("pipeline it: stopped", "outbox-relay stopped")
        .doesNotContain("cannot start reading");
  }

  private long published() throws Exception {
    return fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL");
  }

  private Set<UUID> publishedEventIds() throws Exception {
    Set<UUID> ids = new HashSet<>();
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery("SELECT event_id FROM outbox WHERE published_at IS NOT NULL")) {
      while (rs.next()) {
        ids.add(rs.getObject(1, UUID.class));
      }
    }
    return ids;
  }
}
