package io.outbox.relay.it;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.cli.Main;
import io.outbox.testkit.Services;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
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
    assertThat(slots()).as("replication slots left behind").isZero();
  }

  private int slots() throws Exception {
    try (Connection c =
            DriverManager.getConnection(
                Services.jdbcUrl("postgres"), Services.pgUser(), Services.pgPassword());
        Statement st = c.createStatement();
        java.sql.ResultSet rs =
            st.executeQuery(
                "SELECT count(*) FROM pg_replication_slots WHERE database = '" + database + "'")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  @Test
  void demoExactlyOnceKillsItsRelayAndSeesNoDuplicate(@TempDir Path dir) throws Exception {
    assertExactlyOnceDemo(dir, 4);
  }

  @Test
  void demoExactlyOnceThroughCdcKillsItsRelayAndSeesNoDuplicate(@TempDir Path dir)
      throws Exception {
    // 8 s: the kill comes 4 s in, once the stream has settled some of the orders.
    assertExactlyOnceDemo(dir, 8, "--source", "cdc");
    assertThat(slots()).as("replication slots left behind").isZero();
  }

  /**
   * {@code demo --exactly-once --duration <seconds>} with {@code extra}: once, across its kill -9
   * (half-way through the writing, the relay publishing since the demo's warm-up event went
   * through).
   */
  private void assertExactlyOnceDemo(Path dir, int seconds, String... extra) throws Exception {
    // The demo prints its summary on System.out: read it there (and still show it).
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    int exit;
    try {
      System.setOut(new PrintStream(new TeeStream(original, captured), true, UTF_8));
      String[] args = new String[3 + extra.length];
      args[0] = "--exactly-once";
      args[1] = "--duration";
      args[2] = Integer.toString(seconds);
      System.arraycopy(extra, 0, args, 3, extra.length);
      exit = runDemo(dir, args);
    } finally {
      System.setOut(original);
    }
    String out = captured.toString(UTF_8);
    assertThat(out).contains("exactly-once (read_committed consumer)");
    assertThat(out).containsPattern("kill -9 of the relay \\(pid \\d+\\) with \\d+ events settled");
    long settledAtKill =
        Long.parseLong(out.replaceFirst("(?s).*with (\\d+) events settled.*", "$1"));
    long written =
        Long.parseLong(out.replaceFirst("(?s).*written \\(committed\\) +(\\d+) events.*", "$1"));
    assertThat(settledAtKill)
        .as("killed in the middle of the run")
        .isPositive()
        .isLessThan(written);
    assertThat(out).containsPattern("duplicates +0\\n");
    assertThat(out).contains("demo: OK, every committed event arrived exactly once");
    assertThat(exit).isZero();
  }

  @Test
  void demoRefusesExactlyOnceWithoutKafka(@TempDir Path dir) throws Exception {
    StringWriter err = new StringWriter();
    int exit =
        Main.execute(
            new PrintWriter(new StringWriter()),
            new PrintWriter(err),
            "demo",
            "--no-services",
            "--exactly-once",
            "--sink",
            "rabbitmq");
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString().lines().findFirst())
        .contains(
            "outbox-relay demo: --exactly-once needs the Kafka sink (Kafka transactions), not"
                + " --sink rabbitmq; other sinks deliver at least once");
  }

  /** Writes to two streams. */
  private static final class TeeStream extends OutputStream {
    private final OutputStream a;
    private final OutputStream b;

    TeeStream(OutputStream a, OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public void write(int c) throws IOException {
      a.write(c);
      b.write(c);
    }

    @Override
    public void write(byte[] bytes, int off, int len) throws IOException {
      a.write(bytes, off, len);
      b.write(bytes, off, len);
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
                "demo", "--no-services", "--config", config.toString(), "--rate", "100"));
    args.addAll(java.util.List.of(extra));
    if (!args.contains("--duration")) {
      // A second of orders (~200 events) goes through the path as well as more would.
      args.addAll(java.util.List.of("--duration", "1"));
    }
    int exit =
        Main.execute(
            new PrintWriter(new StringWriter()), new PrintWriter(err), args.toArray(String[]::new));
    assertThat(err.toString()).as("demo stderr").doesNotContain("Exception");
    return exit;
  }
}
