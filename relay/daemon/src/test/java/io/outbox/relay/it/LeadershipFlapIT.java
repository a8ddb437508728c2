package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #12, point 4: leadership flaps under load. The leader session is terminated every second or
 * two while two instances run and writers commit; each flap hands leadership to whichever instance
 * takes the lock first, with claims of the old epoch still in flight. Nothing is lost and the first
 * deliveries of every key stay in order.
 *
 * <p>A flap is struck only once the leader before it publishes again (50 events in), so each one
 * meets claims in flight; the pause after that only lets the stream run.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class LeadershipFlapIT {
  private static final int FLAPS = 10;
  private static final Duration EVERY = Duration.ofSeconds(1);

  /** Longest wait for a relay process to start and publish (a JVM start on a loaded machine). */
  private static final Duration STARTUP = Duration.ofSeconds(90);

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;
  private OutboxLoad stream;

  @Test
  void terminatingTheLeaderSessionEveryFewSecondsLosesNothingAndKeepsKeyOrder() throws Exception {
    fx = relays.closeAfter(new RelayFixture("leadership_flap"));
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    String config = fx.config("lanes = 2, batch-size = 50");
    RelayProcess a = relays.startActive("a", config, STARTUP);
    RelayProcess b = relays.startStandby("b", config, STARTUP);
    stream = relays.closeAfter(OutboxLoad.stream(fx, 20, 5, Duration.ofMillis(10)));
    await().atMost(STARTUP).until(() -> fx.published() >= 500);

    int terminated = 0;
    Duration slowest = Duration.ZERO;
    long flapsFrom = System.nanoTime();
    for (int i = 0; i < FLAPS; i++) {
      long flapAt = System.nanoTime();
      terminated += terminateLeaderSession();
      long before = fx.published();
      // Each time someone takes over and publishes again before the next flap.
      await().atMost(Duration.ofSeconds(30)).until(() -> fx.published() > before + 50);
      Duration recovered = Duration.ofNanos(System.nanoTime() - flapAt);
      slowest = recovered.compareTo(slowest) > 0 ? recovered : slowest;
      await().pollDelay(EVERY).until(() -> true);
    }
    Duration flapping = Duration.ofNanos(System.nanoTime() - flapsFrom);
    Set<UUID> committed = stream.stop();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);

    Deliveries deliveries = fx.assertDeliveredInKeyOrder(committed);
    assertThat(terminated).as("leader sessions terminated").isEqualTo(FLAPS);
    assertThat(a.isAlive() && b.isAlive()).isTrue();
    System.out.printf(
        "LeadershipFlapIT: %d leader sessions terminated in %d ms (publishing again within %d ms"
            + " at the slowest); %d events, %d duplicate(s), epoch %d%n",
        terminated,
        flapping.toMillis(),
        slowest.toMillis(),
        committed.size(),
        deliveries.duplicates(),
        fx.count("SELECT max(epoch) FROM outbox_relay_leader"));
  }

  /** Ends the session holding the pipeline's leader lock; 1 when there was one. */
  private int terminateLeaderSession() throws Exception {
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l"
                    + " JOIN pg_database d ON d.oid = l.database AND d.datname = current_database()"
                    + " WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
