package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxWriter;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivatePostgres;
import io.outbox.testkit.RelayProcess;
import io.outbox.testkit.Services;
import io.outbox.testkit.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plants a canary password in a secret file and in the environment and runs the daemon as an
 * operator would (check-config, migrate, run, a broker refusing the password, a database refusing
 * it, an invalid config), with every logger at DEBUG; the canary must appear in no output. The
 * database is a private cluster that really checks passwords (scram-sha-256 over TLS).
 */
class SecretCanaryIT {

  private static final String CANARY = "Canary-9d2f-Pw";
  private static final String DATABASE = "canary_it";

  @TempDir static Path dir;
  private static PrivatePostgres pg;

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();

  private final List<RelayProcess> runs = new ArrayList<>();

  @BeforeAll
  static void startCluster() throws Exception {
    TestCertificates certificates =
        TestCertificates.create(dir.resolve("pg"), "pg", TestCertificates.LOOPBACK);
    pg = PrivatePostgres.start(certificates, CANARY);
    pg.createDatabase(DATABASE);
  }

  @AfterAll
  static void stopCluster() {
    if (pg != null) {
      pg.close();
    }
  }

  /**
   * Two pipelines: {@code kafka} reads its database password from a file; {@code rabbit} takes the
   * same password from the environment for the database and (wrongly) for RabbitMQ.
   */
  private String config(Path passwordFile, String topicPrefix, String extra) {
    return """
        outbox-relay {
          http.port = 0
          shutdown-timeout = 10s
          pipeline-defaults {
            database { url = "%s", user = "%s" }
            source.polling.poll-interval = 250ms
            sink.reconnect-backoff { initial = 200ms, max = 1s }
          }
          pipelines {
            kafka {
              database.password-file = "%s"
              sink { type = kafka, kafka {
                bootstrap-servers = "%s"
                producer { "ssl.key.password" = ${CANARY_PASSWORD} }
              } }
              routing.destination = "%s.${aggregate_type}"
            }
            rabbit {
              database.password = ${CANARY_PASSWORD}
              table = rabbit_outbox
              dead-letter-table = rabbit_dead_letter
              sink { type = rabbitmq, rabbitmq {
                uri = "amqp://guest@%s:%d/%%2f"
                password = ${CANARY_PASSWORD}
                trust-store-password = ${CANARY_PASSWORD}
              } }
            }
          }
          %s
        }
        """
        .formatted(
            pg.url(DATABASE),
            PrivatePostgres.ADMIN,
            passwordFile,
            Services.kafkaBootstrap(),
            topicPrefix,
            Services.rabbitHost(),
            Services.rabbitPort(),
            extra);
  }

  private RelayProcess daemon(String name, String hocon, String password, String... command) {
    Path logback = dir.resolve("logback-debug.xml");
    RelayProcess p =
        relays.start(
            name,
            hocon,
            Map.of(
                "CANARY_PASSWORD",
                password,
                "JAVA_TOOL_OPTIONS",
                "-Dlogback.configurationFile=" + logback),
            command);
    runs.add(p);
    return p;
  }

  @Test
  void theCanaryPasswordAppearsInNoOutput() throws Exception {
    Files.writeString(
        dir.resolve("logback-debug.xml"),
        """
        <configuration>
          <appender name="ERR" class="ch.qos.logback.core.ConsoleAppender">
            <target>System.err</target>
            <encoder><pattern>%d %-5level [%thread] %logger - %msg%n</pattern></encoder>
          </appender>
          <root level="DEBUG"><appender-ref ref="ERR"/></root>
        </configuration>
        """);
    Path passwordFile = Files.writeString(dir.resolve("db-password"), CANARY + "\n");
    String prefix = KafkaTestSupport.uniqueTopic("canary");
    String hocon = config(passwordFile, prefix, "");

    RelayProcess check = daemon("check-config", hocon, CANARY, "check-config");
    assertThat(check.awaitExit(Duration.ofSeconds(60))).contains(0);
    assertThat(check.log())
        .contains("password = \"******\"")
        .as("secrets from the environment and files are not plain text in the file")
        .doesNotContain("plain text");

    RelayProcess migrate = daemon("migrate", hocon, CANARY, "migrate");
    assertThat(migrate.awaitExit(Duration.ofSeconds(60))).contains(0);

    RelayProcess run = daemon("run", hocon, CANARY, "run");
    try (Connection c = pg.connectAsAdmin(DATABASE)) {
      OutboxWriter.forTable("outbox").write(c, RelayFixture.event("o-1", 1));
      OutboxWriter.forTable("rabbit_outbox").write(c, RelayFixture.event("o-1", 1));
    }
    assertThat(KafkaTestSupport.readRecords(prefix + ".order", 1, Duration.ofSeconds(60)))
        .as("the kafka pipeline used the password from the file")
        .hasSize(1);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(run.log()).contains("ACCESS_REFUSED"));
    assertThat(run.terminate(Duration.ofSeconds(30))).contains(0);

    RelayProcess wrongDatabasePassword =
        daemon("migrate-wrong-password", hocon, CANARY + "-wrong", "migrate");
    assertThat(wrongDatabasePassword.awaitExit(Duration.ofSeconds(60))).contains(1);
    assertThat(wrongDatabasePassword.log()).contains("password authentication failed");

    RelayProcess invalid =
        daemon(
            "check-config-invalid",
            config(passwordFile, prefix, "pipeline-defaults.lanes = 0"),
            CANARY,
            "check-config");
    assertThat(invalid.awaitExit(Duration.ofSeconds(60))).contains(2);

    RelayProcess literal =
        daemon(
            "check-config-literal",
            config(
                passwordFile,
                prefix,
                "pipelines.rabbit.sink.rabbitmq.password = \"" + CANARY + "\""),
            CANARY,
            "check-config");
    assertThat(literal.awaitExit(Duration.ofSeconds(60))).contains(0);
    assertThat(literal.log())
        .contains(
            "WARN  [main] io.outbox.relay.cli.ConfigFileOption -"
                + " outbox-relay.pipelines.rabbit.sink.rabbitmq.password holds a secret written in"
                + " plain text at ");

    for (RelayProcess p : runs) {
      assertThat(p.log()).as("output of %s", p).isNotBlank().doesNotContain(CANARY);
    }
  }
}
