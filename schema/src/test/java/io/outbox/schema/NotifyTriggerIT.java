package io.outbox.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxTables;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

class NotifyTriggerIT {

  /** Long enough for a committed notification to arrive on a local server. */
  private static final int ARRIVAL_MILLIS = 5_000;

  /** How long "nothing more arrives" is watched for. */
  private static final int QUIET_MILLIS = 300;

  private static final String INSERT_THREE =
      "INSERT INTO %s (aggregate_type, aggregate_id, event_type, payload)"
          + " SELECT 'order', g::text, 'OrderCreated', '{}'::jsonb FROM generate_series(1, 3) g";

  private TestDatabase db;
  private final OutboxTables orders = OutboxTables.of("orders_outbox");
  private final OutboxTables billing = OutboxTables.of("Billing.Events", "Billing.Events_Dead");

  @BeforeEach
  void migrate() throws SQLException {
    db = TestDatabase.create("schema_notify");
    new Migrator(orders).migrate(db.url(), db.user(), db.password());
    new Migrator(billing).migrate(db.url(), db.user(), db.password());
  }

  @AfterEach
  void dropDatabase() {
    db.close();
  }

  @Test
  void notifiesOnceWhenAMultiRowInsertCommits() throws SQLException {
    try (Connection listener = db.connect();
        Connection writer = db.connect()) {
      listen(listener, orders.notifyChannel());
      writer.setAutoCommit(false);
      try (Statement statement = writer.createStatement()) {
        statement.executeUpdate(INSERT_THREE.formatted(orders.qualifiedTable()));
      }

      assertThat(receive(listener, QUIET_MILLIS)).as("before commit").isEmpty();
      writer.commit();

      assertThat(receive(listener, ARRIVAL_MILLIS))
          .extracting(PGNotification::getName)
          .containsExactly("outbox_relay_public_orders_outbox");
      assertThat(receive(listener, QUIET_MILLIS)).as("after the first").isEmpty();
    }
  }

  @Test
  void notifiesOncePerCommittedTransactionAndNeverForARollback() throws SQLException {
    try (Connection listener = db.connect();
        Connection writer = db.connect()) {
      listen(listener, orders.notifyChannel());
      writer.setAutoCommit(false);
      try (Statement statement = writer.createStatement()) {
        statement.executeUpdate(INSERT_THREE.formatted(orders.qualifiedTable()));
        writer.rollback();
        assertThat(receive(listener, QUIET_MILLIS)).as("rolled back").isEmpty();

        statement.executeUpdate(INSERT_THREE.formatted(orders.qualifiedTable()));
        writer.commit();
        assertThat(receive(listener, ARRIVAL_MILLIS)).hasSize(1);
        statement.executeUpdate(INSERT_THREE.formatted(orders.qualifiedTable()));
        writer.commit();
        assertThat(receive(listener, ARRIVAL_MILLIS)).hasSize(1);
      }
    }
  }

  @Test
  void eachOutboxNotifiesItsOwnChannel() throws SQLException {
    try (Connection listener = db.connect();
        Connection writer = db.connect()) {
      listen(listener, orders.notifyChannel());
      listen(listener, billing.notifyChannel());
      try (Statement statement = writer.createStatement()) {
        statement.executeUpdate(INSERT_THREE.formatted(billing.qualifiedTable()));
      }

      assertThat(receive(listener, ARRIVAL_MILLIS))
          .extracting(PGNotification::getName)
          .containsExactly(billing.notifyChannel());
      assertThat(receive(listener, QUIET_MILLIS)).isEmpty();
    }
  }

  @Test
  void triggerFiresAfterInsertOncePerStatement() throws SQLException {
    try (Connection c = db.connect()) {
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT action_timing || ' ' || event_manipulation || ' ' || action_orientation"
                      + " FROM information_schema.triggers"
                      + " WHERE event_object_schema = ? AND event_object_table = ?"
                      + " AND trigger_name = 'outbox_relay_notify'",
                  "public",
                  "orders_outbox"))
          .containsExactly("AFTER INSERT STATEMENT");
    }
  }

  @Test
  void skipsTheNotificationWhileTheGateIsHeldAndMarksTheTransactionUntilItEnds() throws Exception {
    int key = orders.wakeLockKey();
    try (Connection listener = db.connect();
        Connection gate = db.connect();
        Connection writer = db.connect()) {
      listen(listener, orders.notifyChannel());
      execute(gate, "SELECT pg_advisory_lock(" + key + ", 1)");
      writer.setAutoCommit(false);
      execute(writer, INSERT_THREE.formatted(orders.qualifiedTable()));

      execute(gate, "SELECT pg_advisory_unlock(" + key + ", 1)");
      execute(gate, "SET lock_timeout = 200");
      assertThat(tryLock(gate, key, 2)).as("the barrier while the skipper is open").isFalse();
      writer.commit();
      assertThat(tryLock(gate, key, 2)).as("the barrier once it committed").isTrue();
      assertThat(receive(listener, QUIET_MILLIS)).as("skipped").isEmpty();

      execute(writer, INSERT_THREE.formatted(orders.qualifiedTable()));
      writer.commit();
      assertThat(receive(listener, ARRIVAL_MILLIS)).as("gate free again").hasSize(1);
    }
  }

  @Test
  void aGateRequestStillWaitingAlreadyMakesNewInsertsSkip() throws Exception {
    int key = orders.wakeLockKey();
    try (Connection listener = db.connect();
        Connection gate = db.connect();
        Connection first = db.connect();
        Connection second = db.connect()) {
      listen(listener, orders.notifyChannel());
      first.setAutoCommit(false);
      second.setAutoCommit(false);
      execute(first, INSERT_THREE.formatted(orders.qualifiedTable())); // holds (key, 1) shared
      CompletableFuture<Void> acquired = lockAsync(gate, key, 1);
      awaitWaiting(key);

      execute(second, INSERT_THREE.formatted(orders.qualifiedTable())); // queued behind the gate
      first.commit();
      acquired.get(ARRIVAL_MILLIS, TimeUnit.MILLISECONDS);
      assertThat(receive(listener, ARRIVAL_MILLIS)).as("the first, which found it free").hasSize(1);
      second.commit();
      assertThat(receive(listener, QUIET_MILLIS)).as("the second skipped").isEmpty();
    }
  }

  @Test
  void notifiesWhileTheGateWaitsForSkippers() throws Exception {
    int key = orders.wakeLockKey();
    try (Connection listener = db.connect();
        Connection gate = db.connect();
        Connection skipper = db.connect();
        Connection writer = db.connect()) {
      listen(listener, orders.notifyChannel());
      skipper.setAutoCommit(false);
      writer.setAutoCommit(false);
      execute(gate, "SELECT pg_advisory_lock(" + key + ", 1)");
      execute(skipper, INSERT_THREE.formatted(orders.qualifiedTable()));
      execute(gate, "SELECT pg_advisory_unlock(" + key + ", 1)");
      CompletableFuture<Void> barrier = lockAsync(gate, key, 2);
      awaitWaiting(key);

      execute(writer, INSERT_THREE.formatted(orders.qualifiedTable())); // cannot mark itself
      writer.commit();
      assertThat(receive(listener, ARRIVAL_MILLIS)).as("the unmarked writer").hasSize(1);
      assertThat(barrier).isNotDone();
      skipper.commit();
      barrier.get(ARRIVAL_MILLIS, TimeUnit.MILLISECONDS);
      assertThat(receive(listener, QUIET_MILLIS)).as("the skipper").isEmpty();
    }
  }

  @Test
  void skipsTheNotificationWhileNoRelayListens() throws SQLException {
    try (Connection listener = db.connect();
        Connection writer = db.connect()) {
      listenOnly(listener, orders.notifyChannel()); // listens, but not as a relay: no (key, 3)
      execute(writer, INSERT_THREE.formatted(orders.qualifiedTable()));

      execute(listener, "SELECT pg_notify('" + orders.notifyChannel() + "', 'sentinel')");
      assertThat(receive(listener, ARRIVAL_MILLIS))
          .as("only the sentinel sent after the insert")
          .extracting(PGNotification::getParameter)
          .containsExactly("sentinel");
    }
  }

  @Test
  void aListenerTakingItsLockWaitsForSkippersAndMakesNewInsertsNotifyMeanwhile() throws Exception {
    int key = orders.wakeLockKey();
    try (Connection listener = db.connect();
        Connection skipper = db.connect();
        Connection writer = db.connect()) {
      skipper.setAutoCommit(false);
      writer.setAutoCommit(false);
      execute(skipper, INSERT_THREE.formatted(orders.qualifiedTable())); // nobody listens: skips
      listenOnly(listener, orders.notifyChannel());
      CompletableFuture<Void> present = lockAsync(listener, key, 3);
      awaitWaiting(key);

      execute(writer, INSERT_THREE.formatted(orders.qualifiedTable())); // behind the listener
      writer.commit();
      assertThat(present).as("waits for the skipper").isNotDone();
      skipper.commit();
      present.get(ARRIVAL_MILLIS, TimeUnit.MILLISECONDS);
      assertThat(receive(listener, ARRIVAL_MILLIS)).as("the writer notified").hasSize(1);
      assertThat(receive(listener, QUIET_MILLIS)).as("the skipper did not").isEmpty();
    }
  }

  /** Waits until a session waits for one of the outbox's wake locks. */
  private void awaitWaiting(int key) throws Exception {
    try (Connection c = db.connect()) {
      await()
          .atMost(Duration.ofSeconds(5))
          .until(
              () ->
                  Catalog.count(
                          c,
                          "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                              + " AND NOT granted AND classid = ?::bigint::oid",
                          key & 0xffff_ffffL)
                      > 0);
    }
  }

  /** {@code pg_advisory_lock(key, half)} on another thread: it may wait. */
  private static CompletableFuture<Void> lockAsync(Connection c, int key, int half) {
    return CompletableFuture.runAsync(
        () -> {
          try {
            execute(c, "SELECT pg_advisory_lock(" + key + ", " + half + ")");
          } catch (SQLException e) {
            throw new IllegalStateException(e);
          }
        });
  }

  private static boolean tryLock(Connection c, int key, int half) {
    try {
      execute(c, "SELECT pg_advisory_lock(" + key + ", " + half + ")");
      execute(c, "SELECT pg_advisory_unlock(" + key + ", " + half + ")");
      return true;
    } catch (SQLException e) {
      assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("55P03");
      return false;
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement statement = c.createStatement()) {
      statement.execute(sql);
    }
  }

  /** Listens as a relay does: {@code LISTEN}, then the listener's lock {@code (key, 3)}. */
  private void listen(Connection connection, String channel) throws SQLException {
    OutboxTables tables = channel.equals(orders.notifyChannel()) ? orders : billing;
    listenOnly(connection, channel);
    execute(connection, "SELECT pg_advisory_lock(" + tables.wakeLockKey() + ", 3)");
  }

  /** {@code LISTEN} without the listener's lock: what a relay before V7 did. */
  private static void listenOnly(Connection connection, String channel) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      // Channels are lower-case identifiers, so LISTEN works unquoted.
      statement.execute("LISTEN " + channel);
    }
  }

  private static List<PGNotification> receive(Connection listener, int timeoutMillis)
      throws SQLException {
    PGNotification[] notifications =
        listener.unwrap(PGConnection.class).getNotifications(timeoutMillis);
    return notifications == null ? List.of() : Arrays.asList(notifications);
  }
}
