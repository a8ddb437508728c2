package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxTables;
import io.outbox.client.OutboxWriter;
import io.outbox.schema.Migrator;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.RelayProcess;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code migrate} as the database owner, then {@code run} as a role that has only the privileges
 * docs/security.md lists for the polling source, and the application writing as a role that may
 * only insert: events are delivered and a poison event is dead-lettered.
 */
class LeastPrivilegeIT {

  private static final String PASSWORD = "least-privilege-pw";

  private RelayFixture fx;
  private String relayRole;
  private String writerRole;
  @RegisterExtension final RelayProcesses relays = new RelayProcesses();

  @BeforeEach
  void createRoles() throws Exception {
    fx = new RelayFixture("least_privilege_it"); // migrates as the owner (the superuser)
    String suffix = fx.db.name().substring(fx.db.name().lastIndexOf('_') + 1);
    relayRole = "outbox_relay_" + suffix;
    writerRole = "outbox_writer_" + suffix;
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement()) {
      for (String role : List.of(relayRole, writerRole)) {
        st.execute(
            "CREATE ROLE "
                + role
                + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION"
                + " PASSWORD '"
                + PASSWORD
                + "'");
        st.execute("GRANT CONNECT ON DATABASE " + fx.db.name() + " TO " + role);
        st.execute("GRANT USAGE ON SCHEMA public TO " + role);
      }
      // Exactly the grants of docs/security.md, "Polling source".
      st.execute("REVOKE ALL ON DATABASE " + fx.db.name() + " FROM PUBLIC");
      st.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
      st.execute("GRANT SELECT, UPDATE, DELETE ON outbox TO " + relayRole);
      st.execute("GRANT SELECT, INSERT, DELETE ON outbox_dead_letter TO " + relayRole);
      st.execute("GRANT SELECT, INSERT, UPDATE ON outbox_relay_leader TO " + relayRole);
      // The application: "Writing events".
      st.execute("GRANT INSERT ON outbox TO " + writerRole);
    }
  }

  @AfterEach
  void dropEverything() throws Exception {
    relays.killAll();
    fx.close();
    try (Connection c =
            DriverManager.getConnection(
                io.outbox.testkit.Services.jdbcUrl("postgres"),
                io.outbox.testkit.Services.pgUser(),
                io.outbox.testkit.Services.pgPassword());
        Statement st = c.createStatement()) {
      st.execute("DROP ROLE IF EXISTS " + relayRole);
      st.execute("DROP ROLE IF EXISTS " + writerRole);
    }
  }

  private Connection connectAs(String role) throws Exception {
    return DriverManager.getConnection(fx.db.url(), role, PASSWORD);
  }

  /** Whether the relay's role has an attribute beyond LOGIN (other than {@code allowed}). */
  private boolean hasSpecialAttributes(String allowed) throws Exception {
    try (Connection c = connectAs(relayRole);
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT rolsuper OR rolcreatedb OR rolcreaterole OR rolbypassrls"
                    + (allowed.equals("REPLICATION") ? "" : " OR rolreplication")
                    + " FROM pg_roles WHERE rolname = current_user")) {
      rs.next();
      return rs.getBoolean(1);
    }
  }

  @Test
  void pollingRunsAsANonSuperuserWithOnlyTheDocumentedGrants() throws Exception {
    assertThat(hasSpecialAttributes("")).as("the relay's role has a special attribute").isFalse();
    deliversAndDeadLetters("", false);
  }

  @Test
  void pollingSettlingByPositionRunsWithOnlyTheDocumentedGrants() throws Exception {
    // migrate with on-publish = position, as the owner; then the one grant docs/security.md adds.
    new Migrator(OutboxTables.of("outbox", "outbox_dead_letter"), null, true)
        .migrate(fx.db.url(), fx.db.user(), fx.db.password());
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement()) {
      st.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON outbox_relay_position TO " + relayRole);
    }
    deliversAndDeadLetters("on-publish = position", false);
    assertThat(fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL"))
        .as("the healthy events settled by position, not written")
        .isZero();
  }

  @Test
  void cdcRunsAsAReplicationRoleWithOnlyTheDocumentedGrants() throws Exception {
    String publication = "outbox_relay_pub_" + relayRole.substring(relayRole.lastIndexOf('_') + 1);
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement()) {
      // Exactly the additions of docs/security.md, "CDC source"; the publication is a DBA's.
      st.execute("ALTER ROLE " + relayRole + " REPLICATION");
      st.execute("GRANT SELECT, INSERT, UPDATE ON outbox_relay_offsets TO " + relayRole);
      st.execute("GRANT SELECT, INSERT, UPDATE ON outbox_relay_leader TO " + relayRole);
      st.execute(
          "CREATE PUBLICATION "
              + publication
              + " FOR TABLE outbox (id, aggregate_type, aggregate_id, available_at)"
              + " WITH (publish = 'insert')");
    }
    assertThat(hasSpecialAttributes("REPLICATION"))
        .as("the relay's role has a special attribute besides REPLICATION")
        .isFalse();
    deliversAndDeadLetters(
        "source { type = cdc, cdc { create-publication = false, publication-name = \""
            + publication
            + "\", heartbeat-interval = 200ms, offset-commit-interval = 100ms } }",
        true);
  }

  /**
   * Runs the relay as the least-privilege role and checks delivery and dead-lettering; {@code
   * streaming}: first wait until the pipeline's replication slot is active (events committed before
   * the slot exists would only come through the reconcile sweep, minutes later).
   */
  private void deliversAndDeadLetters(String extra, boolean streaming) throws Exception {
    RelayProcess relay =
        relays.start(
            "relay",
            fx.config(
                "database { user = \""
                    + relayRole
                    + "\", password = \""
                    + PASSWORD
                    + "\" }\nretry.max-attempts = 1\nretention.interval = 1s\n"
                    + extra));
    if (streaming) {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  fx.count(
                          "SELECT count(*) FROM pg_replication_slots"
                              + " WHERE database = current_database() AND active")
                      == 1);
    }

    List<UUID> healthy;
    UUID poison;
    try (Connection c = connectAs(writerRole)) {
      OutboxWriter writer = OutboxWriter.forTable("outbox");
      healthy =
          writer.writeAll(c, List.of(RelayFixture.event("o-1", 1), RelayFixture.event("o-2", 2)));
      poison =
          writer.write(
              c,
              OutboxMessage.builder()
                  .aggregate("order", "poison")
                  .eventType("Misrouted")
                  .destination("not a valid topic!")
                  .payload("{}")
                  .build());
    }

    assertThat(fx.read(fx.topic("order"), 2, Duration.ofSeconds(60)))
        .extracting(r -> UUID.fromString(KafkaTestSupport.header(r, "event-id")))
        .containsExactlyInAnyOrderElementsOf(healthy);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                fx.count(
                        "SELECT count(*) FROM outbox_dead_letter WHERE event_id = '"
                            + poison
                            + "' AND reason = 'permanent'")
                    == 1);
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 0);
    assertThat(
            fx.count(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = '"
                    + relayRole
                    + "' AND application_name LIKE 'outbox-relay%'"))
        .as("the relay's connections use the least-privilege role")
        .isPositive();
    // A missing grant the relay survives (retention, leader lock, notifications) is only logged.
    assertThat(relay.log())
        .contains("retention deletes")
        .doesNotContainIgnoringCase("permission denied")
        .doesNotContain("retention failed");
    assertThat(relay.terminate(Duration.ofSeconds(30))).contains(0);
  }
}
