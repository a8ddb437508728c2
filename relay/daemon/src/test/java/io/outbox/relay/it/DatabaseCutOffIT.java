package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.FaultProxy;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import io.outbox.testkit.Services;
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
 * The relay's database cut off without a reset: its connections go through a {@link FaultProxy}
 * that drops every byte both ways for 20 s (a firewall dropping packets), while the application
 * keeps committing events directly. Every lane must notice within socket-timeout and say so,
 * instead of waiting on a half-open socket for the kernel's ~15 minutes; once the network is back
 * the relay resumes by itself, and nothing is lost or reordered.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DatabaseCutOffIT {
  private static final int LANES = 4;
  private static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(4);
  private static final Duration CUT_OFF = Duration.ofSeconds(20);

  /**
   * What the settings imply: a lane that claims ahead has two connections in flight (the batch it
   * publishes and the one claimed ahead), and their statements may run into the black hole one
   * after the other: the first broken one is the batch claimed ahead, released quietly, then the
   * settlement of the batch being published waits its own socket-timeout before the lane reports
   * the error (seen on a loaded machine: 4.04 s, then the report at 8.06 s). So twice
   * socket-timeout, plus a poll-interval before a lane's next claim, plus scheduling slack.
   */
  private static final Duration DETECTION_BOUND = SOCKET_TIMEOUT.multipliedBy(2).plusSeconds(3);

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;
  private FaultProxy proxy;
  private OutboxLoad stream;

  @Test
  void everyLaneNoticesABlackHoledDatabaseWithinTheSocketTimeoutAndResumesAfterIt()
      throws Exception {
    fx = relays.closeAfter(new RelayFixture("database_cut_off"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    proxy = relays.closeAfter(FaultProxy.start(Services.pgHost(), Services.pgPort()));
    String viaProxy = "jdbc:postgresql://" + proxy.address() + "/" + fx.db.name();
    RelayProcess relay =
        relays.start(
            "a",
            fx.config(
                """
                lanes = %d, batch-size = 100
                source.polling { statement-timeout = 2s, socket-timeout = %ds,
                                 connection-timeout = 3s }
                """
                    .formatted(LANES, SOCKET_TIMEOUT.toSeconds()),
                Services.kafkaBootstrap(),
                viaProxy));
    await().atMost(Duration.ofSeconds(30)).until(() -> relay.logContains(ACTIVE));
    stream = relays.closeAfter(OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(20)));
    await().atMost(Duration.ofSeconds(30)).until(() -> published() >= 500);

    Instant cutAt = Instant.now();
    proxy.set(FaultProxy.Mode.BLACKHOLE);
    // Every lane claims every poll-interval, so every lane runs into the black hole.
    await()
        .atMost(DETECTION_BOUND.plusSeconds(5))
        .until(() -> lanesThatSawTheFailure(relay, cutAt).size() == LANES);
    long publishedWhileCut = published();
    // The cut lasts, writers go on; nothing can be marked published meanwhile.
    await()
        .pollDelay(CUT_OFF.minus(Duration.between(cutAt, Instant.now())))
        .atMost(CUT_OFF.plusSeconds(5))
        .until(() -> true);
    assertThat(published()).as("rows marked during the cut-off").isEqualTo(publishedWhileCut);
    long committedWhileCut = stream.committedCount();

    Instant healedAt = Instant.now();
    proxy.set(FaultProxy.Mode.PASS);
    try {
      await().atMost(Duration.ofSeconds(30)).until(() -> published() > committedWhileCut - 100);
    } catch (RuntimeException e) {
      // Where is it stuck? A thread dump beside the relay's log.
      new ProcessBuilder("jcmd", Long.toString(relay.pid()), "Thread.print")
          .redirectOutput(relay.logFile().resolveSibling(relay.name() + "-threads.txt").toFile())
          .start()
          .waitFor();
      throw e;
    }
    Duration resumed = Duration.between(healedAt, Instant.now());
    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);

    List<Duration> detection = new ArrayList<>();
    for (int lane = 0; lane < LANES; lane++) {
      Instant at = relay.loggedAt(laneFailure(lane), cutAt).orElseThrow();
      detection.add(Duration.between(cutAt, at));
    }
    System.out.printf(
        "DatabaseCutOffIT: each lane's database error %s ms after the cut-off (bound %d ms)%n",
        detection.stream().map(Duration::toMillis).toList(), DETECTION_BOUND.toMillis());
    assertThat(detection)
        .as("time from the cut-off to each lane's database error")
        .allSatisfy(d -> assertThat(d).isLessThan(DETECTION_BOUND));
    // The LISTEN session is silent by nature; its own check (a query every 10 s) finds the cut.
    Duration listenerDetection =
        Duration.between(cutAt, relay.loggedAt("pipeline it: LISTEN", cutAt).orElseThrow());
    assertThat(listenerDetection)
        .as("time from the cut-off to the LISTEN session's failure")
        .isLessThan(Duration.ofSeconds(10).plus(DETECTION_BOUND));
    Deliveries deliveries = Deliveries.readAll(fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts <> 0")).isZero();
    System.out.printf(
        "DatabaseCutOffIT: lanes saw the cut-off after %s ms, the LISTEN session after %d ms;"
            + " publishing resumed %d ms after the network came back; %d events, %d duplicate(s)%n",
        detection.stream().map(Duration::toMillis).toList(),
        listenerDetection.toMillis(),
        resumed.toMillis(),
        committed.size(),
        deliveries.duplicates());
  }

  private static String laneFailure(int lane) {
    return "pipeline it lane " + lane + ": database error";
  }

  private static List<Integer> lanesThatSawTheFailure(RelayProcess relay, Instant since) {
    List<Integer> lanes = new ArrayList<>();
    for (int lane = 0; lane < LANES; lane++) {
      if (relay.loggedAt(laneFailure(lane), since).isPresent()) {
        lanes.add(lane);
      }
    }
    return lanes;
  }

  private long published() throws Exception {
    return fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL");
  }
}
