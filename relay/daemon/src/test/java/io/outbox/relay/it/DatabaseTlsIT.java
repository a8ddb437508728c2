package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.typesafe.config.ConfigFactory;
import io.outbox.client.OutboxTables;
import io.outbox.client.OutboxWriter;
import io.outbox.relay.Relay;
import io.outbox.relay.config.RelayConfigLoader;
import io.outbox.relay.config.RelaySettings;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.schema.Migrator;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivatePostgres;
import io.outbox.testkit.RelayProcess;
import io.outbox.testkit.Services;
import io.outbox.testkit.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relay's database connections over TLS with {@code sslmode=verify-full}, against a private
 * PostgreSQL cluster that accepts TLS connections with a password only ({@code hostssl},
 * scram-sha-256) and presents a certificate of a throwaway CA.
 */
class DatabaseTlsIT {

  private static final String PASSWORD = "canary-pg-tls-5b1e";
  private static final String DATABASE = "tls_it";

  @TempDir static Path dir;
  private static TestCertificates certificates;
  private static TestCertificates otherCa;
  private static PrivatePostgres pg;

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();

  @BeforeAll
  static void startCluster() throws Exception {
    certificates = TestCertificates.create(dir.resolve("pg"), "pg", TestCertificates.LOOPBACK);
    otherCa = TestCertificates.create(dir.resolve("other"), "other", TestCertificates.LOOPBACK);
    pg = PrivatePostgres.start(certificates, PASSWORD);
    pg.createDatabase(DATABASE);
  }

  @AfterAll
  static void stopCluster() {
    if (pg != null) {
      pg.close();
    }
  }

  private static String config(String url, String passwordKey, String topicPrefix) {
    return """
        outbox-relay {
          http.port = 0
          pipelines.tls {
            database { url = "%s", user = "%s", %s }
            source { type = polling, polling { poll-interval = 250ms } }
            sink { type = kafka, kafka { bootstrap-servers = "%s", send-timeout = 10s } }
            routing.destination = "%s.${aggregate_type}"
          }
        }
        """
        .formatted(url, PrivatePostgres.ADMIN, passwordKey, Services.kafkaBootstrap(), topicPrefix);
  }

  @Test
  void migratesAndRelaysOverVerifiedTlsWithThePasswordFromAFile() throws Exception {
    Path secret = Files.writeString(dir.resolve("db-password"), PASSWORD + "\n");
    String prefix = KafkaTestSupport.uniqueTopic("tls");
    RelaySettings settings =
        RelayConfigLoader.standard()
            .load(
                ConfigFactory.parseString(
                    config(pg.url(DATABASE), "password-file = \"" + secret + "\"", prefix)),
                "test")
            .settings();
    DatabaseSettings db = settings.pipelines().get("tls").database();
    assertThat(db.password()).isEqualTo(PASSWORD);
    new Migrator(OutboxTables.of("outbox", "outbox_dead_letter"))
        .migrate(db.url(), db.user(), db.password());

    Relay relay = Relay.start(settings);
    try {
      List<UUID> ids;
      try (Connection c = pg.connectAsAdmin(DATABASE)) {
        ids =
            OutboxWriter.forTable("outbox")
                .writeAll(c, List.of(RelayFixture.event("o-1", 1), RelayFixture.event("o-2", 2)));
      }

      assertThat(KafkaTestSupport.readRecords(prefix + ".order", 2, Duration.ofSeconds(60)))
          .extracting(r -> UUID.fromString(KafkaTestSupport.header(r, "event-id")))
          .containsExactlyInAnyOrderElementsOf(ids);
      try (Connection c = pg.connectAsAdmin(DATABASE);
          Statement st = c.createStatement();
          ResultSet rs =
              st.executeQuery(
                  "SELECT count(*), count(*) FILTER (WHERE s.ssl) FROM pg_stat_activity a"
                      + " JOIN pg_stat_ssl s USING (pid)"
                      + " WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()")) {
        rs.next();
        assertThat(rs.getLong(1)).as("the relay's connections").isPositive();
        assertThat(rs.getLong(2)).as("of them over TLS").isEqualTo(rs.getLong(1));
      }
    } finally {
      relay.close();
    }
  }

  @Test
  void aServerCertificateFromAnotherCaFailsNamingTheDatabaseWithoutThePassword() {
    String url = pg.url("localhost", DATABASE, otherCa);
    String hocon = config(url, "password = ${DB_PASSWORD}", "unused");
    Map<String, String> env = Map.of("DB_PASSWORD", PASSWORD);

    RelayProcess migrate = relays.start("migrate", hocon, env, "migrate");
    assertThat(migrate.awaitExit(Duration.ofSeconds(60))).contains(1);
    assertThat(migrate.log())
        .contains(
            "tls: Migrating the outbox table public.outbox failed: database tls_it at localhost:")
        .containsIgnoringCase("certificat")
        .doesNotContain(PASSWORD);

    RelayProcess run = relays.start("run", hocon, env, "run");
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(run.log())
                    .contains("pipeline tls: cannot start reading, retrying")
                    .contains("jdbc:postgresql://localhost:" + pg.port() + "/" + DATABASE));
    assertThat(run.terminate(Duration.ofSeconds(30))).contains(0);
    assertThat(run.log()).containsIgnoringCase("certificat").doesNotContain(PASSWORD);
  }
}
