package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.cli.Main;
import io.outbox.testkit.Services;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code outbox-relay demo} end to end, on a database of its own. */
class DemoIT {
  private final String database = "demo_it_" + UUID.randomUUID().toString().substring(0, 8);

  @AfterEach
  void dropDatabase() throws Exception {
    try (Connection c =
            DriverManager.getConnection(
                Services.jdbcUrl("postgres"), Services.pgUser(), Services.pgPassword());
        Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    }
  }

  @Test
  void demoDeliversEveryCommittedEventAndExitsZero(@TempDir Path dir) throws Exception {
    assertThat(runDemo(dir)).isZero();
  }

  @Test
  void demoThroughRabbitMqDeliversEveryCommittedEventAndExitsZero(@TempDir Path dir)
      throws Exception {
    assertThat(runDemo(dir, "--sink", "rabbitmq")).isZero();
  }

  @Test
  void demoThroughNatsDeliversEveryCommittedEventAndExitsZero(@TempDir Path dir) throws Exception {
    assertThat(runDemo(dir, "--sink", "nats")).isZero();
  }

  @Test
  void demoThroughRedisDeliversEveryCommittedEventAndExitsZero(@TempDir Path dir) throws Exception {
    assertThat(runDemo(dir, "--sink", "redis")).isZero();
  }

  @Test
  void demoThroughCdcDeliversEveryCommittedEventAndLeavesNoSlot(@TempDir Path dir)
      throws Exception {
    assertThat(runDemo(dir, "--source", "cdc")).isZero();
    try (Connection c =
            DriverManager.getConnection(
                Services.jdbcUrl("postgres"), Services.pgUser(), Services.pgPassword());
        Statement st = c.createStatement();
        java.sql.ResultSet rs =
            st.executeQuery(
                "SELECT count(*) FROM pg_replication_slots WHERE database = '" + database + "'")) {
      rs.next();
      assertThat(rs.getInt(1)).as("replication slots left behind").isZero();
    }
  }

  private int runDemo(Path dir, String... extra) throws Exception {
    Path config = dir.resolve("demo.conf");
    Files.writeString(
        config,
        """
        outbox-relay.pipelines.demo {
          database { url = "%s", user = "%s", password = "%s" }
          sink.kafka.bootstrap-servers = "%s"
          sink.rabbitmq.uri = "%s"
          sink.nats.url = "%s"
          sink.redis.uri = "%s"
        }
        """
            .formatted(
                Services.jdbcUrl(database),
                Services.pgUser(),
                Services.pgPassword(),
                Services.kafkaBootstrap(),
                Services.rabbitUri(),
                Services.natsUrl(),
                Services.redisUri()));
    StringWriter err = new StringWriter();
    java.util.List<String> args =
        new java.util.ArrayList<>(
            java.util.List.of(
                "demo",
                "--no-services",
                "--config",
                config.toString(),
                "--duration",
                "3",
                "--rate",
                "100"));
    args.addAll(java.util.List.of(extra));
    int exit =
        Main.execute(
            new PrintWriter(new StringWriter()), new PrintWriter(err), args.toArray(String[]::new));
    assertThat(err.toString()).as("demo stderr").doesNotContain("Exception");
    return exit;
  }
}
