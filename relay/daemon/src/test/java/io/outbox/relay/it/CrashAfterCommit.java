package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.RelayProcess;
import java.time.Duration;
import java.util.Map;

/**
 * The exactly-once crash between a Kafka transaction's commit and its database settlement (the test
 * hook {@code OUTBOX_RELAY_TEST_CRASH_AFTER_COMMITS} halts the relay there), and the recovery that
 * settles the in-doubt batch from the ledger: what the polling and the CDC exactly-once tests
 * share.
 *
 * @param settledAtCrash events marked published when the relay halted
 * @param inKafka records in the fixture's {@code order} topic when the relay halted
 */
record CrashAfterCommit(long settledAtCrash, long inKafka) {

  /** Starts relay {@code crashing}, which halts (exit 137) after its fifth Kafka commit. */
  static RelayProcess start(RelayProcesses relays, String config) {
    return relays.start(
        "crashing", config, Map.of("OUTBOX_RELAY_TEST_CRASH_AFTER_COMMITS", "5"), "run");
  }

  /**
   * Waits up to 60 s for {@code crashing} to halt, and asserts that its last commit reached Kafka
   * but not the database.
   */
  static CrashAfterCommit awaitHalt(RelayProcess crashing, RelayFixture fx) throws Exception {
    assertThat(crashing.awaitExit(Duration.ofSeconds(60))).as("halted by the hook").contains(137);
    long settledAtCrash = fx.published();
    long inKafka = Deliveries.readAll(fx.topic("order")).records.size();
    assertThat(inKafka)
        .as("the last commit reached Kafka but not the database")
        .isGreaterThan(settledAtCrash);
    return new CrashAfterCommit(settledAtCrash, inKafka);
  }

  /**
   * Starts relay {@code recovering}, waits up to {@code within} until every event is published,
   * asserts that it settled in-doubt batches from the ledger, and stops it (exit 0).
   */
  static void recover(RelayProcesses relays, String config, RelayFixture fx, Duration within)
      throws Exception {
    RelayProcess recovering = relays.start("recovering", config);
    await().atMost(within).until(() -> fx.unpublished() == 0);
    assertThat(recovering.log()).contains("in-doubt batch(es) from the ledger");
    assertThat(recovering.terminate(Duration.ofSeconds(30))).contains(0);
  }
}
