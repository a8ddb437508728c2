package io.outbox.relay.it;

import static io.outbox.relay.it.RelayFixture.ACTIVE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The CDC source's first start while an application transaction is open: PostgreSQL creates the
 * slot only once that transaction ends. The relay says what it waits for (log, {@code status}, the
 * gauge), leaves nothing behind when killed or stopped meanwhile, starts by itself once the
 * transaction commits, and publishes every row: written before the slot, in the transaction, and
 * after. And a catch-up far beyond what the lanes hold survives a {@code kill -9} in its middle.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class CdcFirstStartIT {

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  private RelayFixture fx;
  private Connection app;

  @Test
  @Tag("quick")
  // Exclusive: its open transaction holds back the creation of every replication slot of the
  // cluster, so another CDC test running beside it would wait for it.
  @Tag("exclusive")
  void startsByItselfOnceTheOpenTransactionEndsAndPublishesEveryRow() throws Exception {
    fx = relays.closeAfter(new RelayFixture("cdc_first_start"));
    KafkaTestSupport.createTopic(fx.topic("order"), 3);
    List<UUID> committed = new ArrayList<>(OutboxLoad.backlog(fx, 300, 10));
    // The application's transaction: it wrote, so it holds a transaction id, and stays open.
    app = relays.closeAfter(fx.db.connect());
    app.setAutoCommit(false);
    List<UUID> open = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      open.addAll(fx.writer.writeAll(app, List.of(RelayFixture.event("open", i))));
    }
    int blocker = backendPid(app);
    int port = freePort();
    String config =
        fx.config("lanes = 2, batch-size = 100\n" + fx.cdc(""))
            + "outbox-relay.http { port = "
            + port
            + ", backlog-interval = 1s }\n";
    String waiting = "creating replication slot " + fx.db.name() + " has waited";

    RelayProcess killed = relays.start("killed", config);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> killed.logContains(waiting) && killed.logContains("pid " + blocker + " ("));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                new Scrape(port)
                        .value(
                            "outbox_relay_cdc_slot_creation_blocking_transactions",
                            "pipeline=\"it\"")
                        .orElse(-1)
                    >= 1); // other databases' transactions on a shared cluster count too
    RelayProcess status = relays.start("status", config, Map.of(), "status");
    assertThat(status.awaitExit(Duration.ofSeconds(60))).contains(0);
    assertThat(status.log())
        .contains("it: creating the replication slot for ")
        .contains("transaction(s) open since before: ")
        .contains("pid " + blocker + " (" + fx.db.name() + "/");
    killed.kill9();
    // Its creating session notices the relay is gone (client_connection_check_interval): no
    // session of it, and no slot it would make once the transaction ends.
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> slotCreationSessions() == 0 && slotExists() == 0);

    RelayProcess stopped = relays.start("stopped", config);
    await().atMost(Duration.ofSeconds(60)).until(() -> stopped.logContains(waiting));
    assertThat(stopped.terminate(Duration.ofSeconds(30))).as("SIGTERM mid-wait").contains(0);
    assertThat(stopped.log()).contains("cancelled the creation of replication slot");
    await().atMost(Duration.ofSeconds(5)).until(() -> slotCreationSessions() == 0);

    RelayProcess relay = relays.start("relay", config);
    await().atMost(Duration.ofSeconds(60)).until(() -> relay.logContains(waiting));
    assertThat(relay.log()).doesNotContain(ACTIVE);
    committed.addAll(OutboxLoad.backlog(fx, 50, 10)); // committed while the creation waits
    assertThat(fx.published()).isZero();
    Instant commitAt = Instant.now();
    app.commit();
    committed.addAll(open);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> relay.loggedAt(ACTIVE, commitAt).isPresent());
    Duration started = Duration.between(commitAt, relay.loggedAt(ACTIVE, commitAt).orElseThrow());
    committed.addAll(OutboxLoad.backlog(fx, 100, 10)); // streamed by the new slot
    await().atMost(Duration.ofSeconds(60)).until(() -> fx.unpublished() == 0);
    Duration allPublished = Duration.between(commitAt, Instant.now());

    assertThat(walSenders()).as("walsenders of the test database: the engine's only").isEqualTo(1);
    assertThat(relay.log())
        .contains("to publish ahead of its stream")
        .doesNotContain("reconcile sweep found");
    assertThat(relay.terminate(Duration.ofSeconds(30))).contains(0);
    Deliveries deliveries = fx.assertDeliveredInKeyOrder(committed);
    System.out.printf(
        "CdcFirstStartIT: active %d ms after the blocking transaction committed, all %d events"
            + " published %d ms after it; %d duplicate(s)%n",
        started.toMillis(), committed.size(), allPublished.toMillis(), deliveries.duplicates());
  }

  @Test
  void catchUpBeyondTheLaneBuffersSurvivesKill9InTheMiddle() throws Exception {
    fx = relays.closeAfter(new RelayFixture("cdc_catch_up"));
    KafkaTestSupport.createTopic(fx.topic("order"), 3);
    int backlog = 5_000;
    List<UUID> committed = new ArrayList<>(OutboxLoad.backlog(fx, backlog, 10));
    // Far more than the lanes hold (2 x 100): the catch-up reads the table as they drain.
    String config = fx.config("lanes = 2, batch-size = 50\n" + fx.cdc("lane-buffer = 100"));
    RelayProcess killed = relays.start("killed", config);
    await().atMost(Duration.ofSeconds(60)).until(() -> killed.logContains(ACTIVE));
    committed.addAll(OutboxLoad.backlog(fx, 200, 10)); // streamed, on the same keys
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> fx.published() >= backlog / 5);
    killed.kill9();
    long atKill = fx.published();
    assertThat(atKill).as("killed in the middle of the catch-up").isLessThan(backlog);
    assertThat(catchUpMarkers()).as("the catch-up is still due").isEqualTo(1);

    RelayProcess relay = relays.start("relay", config);
    Instant restartedAt = Instant.now();
    await().atMost(Duration.ofSeconds(90)).until(() -> fx.unpublished() == 0);
    Duration rest = Duration.between(restartedAt, Instant.now());
    committed.addAll(OutboxLoad.backlog(fx, 100, 10));
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    await().atMost(Duration.ofSeconds(10)).until(() -> catchUpMarkers() == 0);
    assertThat(relay.log())
        .contains("resuming the catch-up of slot " + fx.db.name())
        .contains("caught up")
        .doesNotContain("reconcile sweep found");
    assertThat(relay.terminate(Duration.ofSeconds(30))).contains(0);

    Deliveries deliveries = fx.assertDeliveredInKeyOrder(committed);
    System.out.printf(
        "CdcFirstStartIT: catch-up of %d rows killed at %d published; the next relay published"
            + " the rest within %d ms; %d events, %d duplicate(s)%n",
        backlog, atKill, rest.toMillis(), committed.size(), deliveries.duplicates());
  }

  private long catchUpMarkers() throws Exception {
    return fx.count(
        "SELECT count(*) FROM outbox_relay_offsets"
            + " WHERE offset_key = convert_to('outbox-relay catch-up', 'UTF8')"
            + " AND offset_value IS NOT NULL");
  }

  private long slotCreationSessions() throws Exception {
    return fx.count(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'outbox-relay it cdc"
            + " slot creation'");
  }

  private long slotExists() throws Exception {
    return fx.count(
        "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + fx.db.name() + "'");
  }

  private long walSenders() throws Exception {
    return fx.count(
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'walsender' AND datname = '"
            + fx.db.name()
            + "'");
  }

  private static int backendPid(Connection c) throws Exception {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
