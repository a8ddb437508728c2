package io.outbox.schema;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
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

  private static void listen(Connection connection, String channel) throws SQLException {
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
