package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.Relay;
import io.outbox.relay.spi.PluginContext;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivatePostgres;
import io.outbox.testkit.TestCertificates;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The CDC stream under load when PostgreSQL ends it: the walsender terminated ({@code
 * pg_terminate_backend}), then the whole server restarted with {@code pg_ctl restart -m immediate}
 * (a crash and recovery). The relay resumes by itself each time; nothing is lost and first
 * deliveries keep per-key order. A private cluster, so the shared one is never restarted.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CdcResumeIT {
  private static final String SLOT = "cdc_resume";

  private PrivatePostgres pg;
  private RelayFixture fx;
  private Relay relay;
  private OutboxLoad load;

  @AfterEach
  void tearDown() {
    if (load != null) {
      load.close();
    }
    if (relay != null) {
      relay.close(Duration.ofSeconds(10));
    }
    if (fx != null) {
      fx.close();
    }
    if (pg != null) {
      pg.close();
    }
  }

  @Test
  void streamResumesAfterTheWalsenderIsTerminatedAndAfterAnImmediateRestart() throws Exception {
    String password = "pw-" + UUID.randomUUID();
    pg =
        PrivatePostgres.start(
            TestCertificates.create(
                Files.createTempDirectory("cdc-resume-certs-"),
                "cdc-resume",
                TestCertificates.LOOPBACK),
            password,
            "wal_level=logical");
    fx = RelayFixture.onPrivate(pg, password, SLOT);
    KafkaTestSupport.createTopic(fx.topic("order"), 6);
    relay =
        fx.start(
            "lanes = 4, batch-size = 200\n"
                + fx.cdc("debezium { \"database.sslmode\" = require }"));
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> relay.pipelines().get(0).role() == PluginContext.Role.ACTIVE);
    load = OutboxLoad.streamThroughRestarts(fx, 20, 5, Duration.ofMillis(10));
    await().atMost(Duration.ofSeconds(90)).until(() -> fx.published() >= 300);

    assertThat(terminateWalSender()).as("the engine's walsender was ended").isTrue();
    Duration afterTermination = resumedAfter(databaseNow());
    awaitMorePublished(300);

    long restartStarted = System.nanoTime();
    pg.restart("immediate");
    Duration restart = Duration.ofNanos(System.nanoTime() - restartStarted);
    Duration afterRestart = resumedAfter(databaseNow());
    awaitMorePublished(300);

    // The engine restarts its connector 2 s after a lost replication connection
    // (retriable.restart.connector.wait.ms; Debezium's own default, 10 s, made it 11.6 s).
    assertThat(afterTermination)
        .as("resumed after the walsender was terminated")
        .isLessThan(Duration.ofSeconds(9));
    assertThat(afterRestart).as("resumed after the restart").isLessThan(Duration.ofSeconds(20));
    Set<UUID> committed = load.stop();
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    Deliveries deliveries = fx.assertDeliveredInKeyOrder(committed);
    System.out.printf(
        "CdcResumeIT: rows committed after the fault published from %d ms after the walsender"
            + " was terminated, and from %d ms after PostgreSQL was back from an immediate restart"
            + " (the restart took %d ms); %d events, %d duplicate(s)%n",
        afterTermination.toMillis(),
        afterRestart.toMillis(),
        restart.toMillis(),
        committed.size(),
        deliveries.duplicates());
  }

  /** Ends the walsender streaming the slot; whether there was one. */
  private boolean terminateWalSender() throws Exception {
    try (Connection c = fx.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
                    + " WHERE slot_name = '"
                    + SLOT
                    + "' AND active")) {
      return rs.next() && rs.getBoolean(1);
    }
  }

  /**
   * How long after {@code since} (database clock, read once the fault happened) the first row
   * committed after it was published: the stream's resume time, publishing included.
   */
  private Duration resumedAfter(Instant since) {
    Instant[] first = new Instant[1];
    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions() // the database may still be restarting
        .until(
            () -> {
              try (Connection c = fx.connect();
                  PreparedStatement ps =
                      c.prepareStatement(
                          "SELECT min(published_at) FROM outbox WHERE created_at > ?")) {
                ps.setTimestamp(1, Timestamp.from(since));
                try (ResultSet rs = ps.executeQuery()) {
                  rs.next();
                  Timestamp t = rs.getTimestamp(1);
                  first[0] = t == null ? null : t.toInstant();
                  return first[0] != null;
                }
              }
            });
    return Duration.between(since, first[0]);
  }

  private void awaitMorePublished(int more) throws Exception {
    long target = fx.published() + more;
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.published() >= target);
  }

  private Instant databaseNow() throws Exception {
    try (Connection c = fx.connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT clock_timestamp()")) {
      rs.next();
      return rs.getTimestamp(1).toInstant();
    }
  }
}
