package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivateKafka;
import io.outbox.testkit.RelayProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Issue #14: {@code sink.kafka.delivery = exactly-once} while the broker restarts under a stream of
 * events, stopped as an operator would or killed, with the polling source and (killed) with the CDC
 * source streaming from a slot. The relay (a process of its own) rides it out: a {@code
 * read_committed} consumer sees every committed event exactly once, first deliveries in key order,
 * nothing dead-lettered. The broker is a private one (the shared broker of the other tests is never
 * stopped), shared by the tests of this class.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ExactlyOnceBrokerRestartIT {
  private static final Logger log = LoggerFactory.getLogger(ExactlyOnceBrokerRestartIT.class);

  /**
   * The sink's send timeout, scaled down from the fixture's 5 s: a send or commit the outage caught
   * gives up after it, and the relay pauses (or finds the commit in doubt).
   */
  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(3);

  /**
   * How long the broker stays down before it is started again (its start adds seconds): past the
   * send timeout, so that what was in flight when it went times out while it is away.
   */
  private static final Duration DOWN = SEND_TIMEOUT.plusSeconds(1);

  private static PrivateKafka kafka;

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();

  @BeforeAll
  static void startBroker() {
    kafka = PrivateKafka.start();
  }

  @AfterAll
  static void stopBroker() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @BeforeEach
  void setUp() {
    if (!kafka.isRunning()) {
      kafka.restart(); // an earlier test failed while the broker was down
    }
  }

  @Test
  // Long tier: the suite runs the harsher brokerKilledAndStartedAgainDeliversEveryEventOnce.
  @Tag("long")
  void brokerStoppedAndStartedAgainDeliversEveryEventOnce() throws Exception {
    restartMidRun(false, false);
  }

  @Test
  void brokerKilledAndStartedAgainDeliversEveryEventOnce() throws Exception {
    restartMidRun(true, false);
  }

  /**
   * The CDC source: the relay streams the events from its slot while the broker is gone (the stream
   * does not stop with the sink), so what the lanes had in hand when the broker went, and what the
   * stream delivers again after a pause, meets rows a committed transaction may already hold.
   */
  @Test
  void cdcBrokerKilledAndStartedAgainDeliversEveryEventOnce() throws Exception {
    restartMidRun(true, true);
  }

  private void restartMidRun(boolean kill, boolean cdc) throws Exception {
    String name = (cdc ? "cdc_" : "") + (kill ? "eos_broker_kill" : "eos_broker_stop");
    try (RelayFixture fx = new RelayFixture(name)) {
      try {
        restartMidRun(fx, kill, cdc);
      } finally {
        relays.killAll(); // before the fixture drops the database
      }
    }
  }

  private void restartMidRun(RelayFixture fx, boolean kill, boolean cdc) throws Exception {
    KafkaTestSupport.createTopic(kafka.bootstrap(), fx.topic("order"), 6);
    String config =
        fx.config(
            "lanes = 2, batch-size = 200\n"
                + "sink.kafka.send-timeout = %dms\n".formatted(SEND_TIMEOUT.toMillis())
                + (cdc ? fx.cdc("") : "")
                + fx.exactlyOnce(),
            kafka.bootstrap());
    RelayProcess relay = relays.start("relay", config);
    // A CDC relay's start (engine, slot, catch-up) takes ~35-45 s on the loaded test machine.
    await().atMost(Duration.ofSeconds(90)).until(() -> relay.logContains(ACTIVE));
    Set<UUID> committed;
    long publishedAtRestart;
    long publishedWhileDown;
    Duration restartTook;
    Duration resumedAfter;
    try (OutboxLoad stream = OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(10))) {
      await().atMost(Duration.ofSeconds(60)).until(() -> fx.published() >= 500);

      if (kill) {
        kafka.kill();
      } else {
        kafka.stop();
      }
      publishedAtRestart = fx.published();
      log.info(
          "broker {} with {} events published", kill ? "killed" : "stopped", publishedAtRestart);
      // The outage's length, while the stream goes on: the relay stays up all along.
      await().during(DOWN).atMost(DOWN.plusSeconds(10)).until(relay::isAlive);
      publishedWhileDown = fx.published();
      Instant restarting = Instant.now();
      kafka.restart();
      Instant back = Instant.now();
      restartTook = Duration.between(restarting, back);
      log.info("broker back; {} events published while it was down", publishedWhileDown);
      long committedThen = stream.committedCount();
      await().atMost(Duration.ofSeconds(120)).until(() -> fx.published() >= committedThen + 500);
      resumedAfter = Duration.between(back, Instant.now());
      committed = stream.stop();
    }
    await().atMost(Duration.ofSeconds(120)).until(() -> fx.unpublished() == 0);
    assertThat(relay.isAlive()).as("the relay rode the restart out").isTrue();
    assertThat(relay.terminate(Duration.ofSeconds(30))).contains(0);

    Deliveries deliveries = Deliveries.readAll(kafka.bootstrap(), fx.topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    // A broker killed inside a commit may commit the transaction on some partitions only and leave
    // it open on the others (KAFKA-20734): the relay says so, aborts the open part and sends the
    // batch again, so the events on those partitions are delivered twice (docs/design.md,
    // exactly-once). Duplicates anywhere else, or without that report, break exactly-once.
    Set<Integer> reportedTwice = partitionsReportedTwice(relay.log(), fx.topic("order"));
    if (!reportedTwice.isEmpty()) {
      System.out.printf(
          "ExactlyOnceBrokerRestartIT: the relay reported a partial commit on partitions %s;"
              + " duplicates there: %s%n",
          reportedTwice, deliveries.duplicateCopies());
      assertThat(deliveries.duplicatePartitions())
          .as("partitions with duplicates, beyond those the relay reported committed twice")
          .isSubsetOf(reportedTwice);
    }
    assertThat(reportedTwice.isEmpty() ? deliveries.duplicates() : 0)
        .as(
            () ->
                "duplicates seen by a read_committed consumer ("
                    + deliveries.duplicateCopies()
                    + "); the relay's warnings:\n"
                    + relay
                        .log()
                        .lines()
                        .filter(l -> l.contains(" WARN ") || l.contains(" ERROR "))
                        .collect(java.util.stream.Collectors.joining("\n")))
        .isZero();
    RelayFixture.assertFirstDeliveriesInKeyOrder(deliveries.records, fx.rowIds());
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE attempts > 0"))
        .as("the outage cost no event an attempt")
        .isZero();
    // The broker goes either between transactions (the sink is unavailable: paused, then
    // resumed) or during a commit (in doubt: the ledger decides once the broker is back).
    assertThat(relay.log())
        .as("the relay saw the broker go")
        .containsAnyOf(
            "sink unavailable, pausing publishing", "the outcome of a transaction is unknown");
    assertThat(relay.log())
        .as("a broker away while an in-doubt commit is settled is an outage, not a lane failure")
        .doesNotContain("unexpected failure");
    System.out.printf(
        "ExactlyOnceBrokerRestartIT: %s, broker %s at %d published (%d more while down), down"
            + " %d ms, its start took %d ms, 500 more published %d ms after it was back;"
            + " %d records for %d events, %d duplicate(s); relay log: paused %s, commit in doubt"
            + " %s, 'unexpected failure' %d%n",
        cdc ? "cdc" : "polling",
        kill ? "killed" : "stopped",
        publishedAtRestart,
        publishedWhileDown - publishedAtRestart,
        DOWN.toMillis(),
        restartTook.toMillis(),
        resumedAfter.toMillis(),
        deliveries.records.size(),
        committed.size(),
        deliveries.duplicates(),
        relay.logContains("sink unavailable, pausing publishing"),
        relay.logContains("the outcome of a transaction is unknown"),
        relay.log().lines().filter(l -> l.contains("unexpected failure")).count());
  }

  /**
   * The partitions of {@code topic} that the relay's log names as delivered twice after a partial
   * commit ("... so its events on [topic-4, topic-5] are delivered twice").
   */
  static Set<Integer> partitionsReportedTwice(String log, String topic) {
    Set<Integer> out = new java.util.TreeSet<>();
    java.util.regex.Matcher line =
        java.util.regex.Pattern.compile("its events on \\[([^\\]]*)\\] are delivered twice")
            .matcher(log);
    while (line.find()) {
      for (String partition : line.group(1).split(",\\s*")) {
        if (partition.startsWith(topic + "-")) {
          out.add(Integer.parseInt(partition.substring(topic.length() + 1)));
        }
      }
    }
    return out;
  }
}
