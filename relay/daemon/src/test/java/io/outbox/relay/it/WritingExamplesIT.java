package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.outbox.client.OutboxTables;
import io.outbox.relay.Relay;
import io.outbox.schema.Migrator;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.docs.RepositoryDocs;
import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The writing examples of {@code examples/} (psql, JDBC, Spring, Python, Node, Go), as a team that
 * owns its schema would use them: the outbox comes from {@code migrate --print-sql}'s script
 * applied with psql, each example writes an order and its event in one transaction, and one relay
 * publishes every event. A missing toolchain (scripts/services.sh up installs them) skips its
 * example, except in CI, where it fails the test.
 */
class WritingExamplesIT {
  private static final Path EXAMPLES = RepositoryDocs.root().resolve("examples");
  private static final Duration EXAMPLE_TIMEOUT = Duration.ofSeconds(90);
  private static final String GOPATH = "/usr/share/gocode";
  private static final String PYTHON = "/usr/bin/python3";

  @TempDir Path dir;

  /** The test's database, which every example writes to (PGDATABASE). */
  private String database;

  /** One example: how to run it, or why it cannot run here. */
  private record Example(String name, String missing, List<List<String>> steps) {
    String orderId() {
      return name + "-1";
    }
  }

  /** What running an example gave: {@code null} output when it ran fine. */
  private record Outcome(Example example, String failure) {}

  @Test
  void theRelayPublishesTheRowsOfEveryExample() throws Exception {
    try (RelayFixture fx = RelayFixture.unmigrated("writing_examples")) {
      database = fx.db.name();
      Path script = dir.resolve("outbox.sql");
      Files.writeString(script, new Migrator(OutboxTables.of("outbox")).script());
      run(List.of(psql("-1", "-f", script.toString())), "psql applying the outbox script");
      run(List.of(psql("-f", EXAMPLES.resolve("orders.sql").toString())), "orders.sql");
      KafkaTestSupport.createTopic(fx.topic("order"), 1);
      Relay relay = fx.start("");
      try {
        List<Example> examples = examples();
        List<Example> ran = runAll(examples);

        List<ConsumerRecord<String, byte[]>> records =
            fx.read(fx.topic("order"), ran.size(), Duration.ofSeconds(30));
        Map<String, String> bodies = new LinkedHashMap<>();
        for (ConsumerRecord<String, byte[]> r : records) {
          assertThat(KafkaTestSupport.header(r, "event-type")).isEqualTo("OrderPlaced");
          bodies.put(r.key(), KafkaTestSupport.valueAsString(r));
        }
        assertThat(bodies.keySet())
            .containsExactlyInAnyOrderElementsOf(ran.stream().map(Example::orderId).toList());
        bodies.forEach(
            (key, body) ->
                assertThat(body).as(key).contains("\"orderId\"").contains("\"" + key + "\""));
        assertThat(fx.count("SELECT count(*) FROM orders")).isEqualTo(ran.size());

        List<String> missing =
            examples.stream().filter(e -> e.missing() != null).map(Example::missing).toList();
        if (!missing.isEmpty()) {
          String message =
              "examples not run, their toolchain is missing (scripts/services.sh up installs it): "
                  + String.join("; ", missing);
          if ("true".equals(System.getenv("CI"))) {
            fail(message);
          }
          Assumptions.abort(message);
        }
      } finally {
        relay.close(Duration.ofSeconds(10));
      }
    }
  }

  /** Runs the examples that can run here side by side; fails naming each that failed. */
  private List<Example> runAll(List<Example> examples) throws Exception {
    List<Example> runnable = examples.stream().filter(e -> e.missing() == null).toList();
    ExecutorService pool = Executors.newFixedThreadPool(runnable.size());
    try {
      List<Future<Outcome>> outcomes = new ArrayList<>();
      for (Example example : runnable) {
        outcomes.add(pool.submit(() -> runExample(example)));
      }
      List<String> failures = new ArrayList<>();
      for (Future<Outcome> outcome : outcomes) {
        Outcome o = outcome.get(EXAMPLE_TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS);
        if (o.failure() != null) {
          failures.add(o.example().name() + ": " + o.failure());
        }
      }
      assertThat(failures).as("failed examples").isEmpty();
      return runnable;
    } finally {
      pool.shutdownNow();
    }
  }

  private Outcome runExample(Example example) {
    try {
      run(example.steps(), example.name());
      return new Outcome(example, null);
    } catch (AssertionError | Exception e) {
      return new Outcome(example, e.getMessage());
    }
  }

  private List<Example> examples() throws IOException {
    List<Example> examples = new ArrayList<>();
    Path sql = EXAMPLES.resolve("sql/place-order.sql");
    examples.add(
        new Example(
            "sql",
            onPath("psql") ? null : "sql needs psql",
            List.of(psql("-v", "order_id=sql-1", "-f", sql.toString()))));
    examples.add(java("jdbc"));
    examples.add(java("spring"));
    examples.add(
        new Example(
            "python",
            canRun(PYTHON, "-c", "import psycopg")
                ? null
                : "python needs " + PYTHON + " with psycopg (Debian's python3-psycopg)",
            List.of(
                List.of(
                    PYTHON, EXAMPLES.resolve("python/place_order.py").toString(), "python-1"))));
    Path node = EXAMPLES.resolve("node");
    examples.add(
        new Example(
            "node",
            onPath("node") && Files.isDirectory(node.resolve("node_modules/pg"))
                ? null
                : "node needs node and examples/node/node_modules/pg (npm install)",
            List.of(List.of("node", node.resolve("place-order.js").toString(), "node-1"))));
    Path binary = dir.resolve("go-place-order");
    examples.add(
        new Example(
            "go",
            onPath("go") && Files.isDirectory(Path.of(GOPATH, "src/github.com/jackc/pgx/v4"))
                ? null
                : "go needs go and pgx v4 in "
                    + GOPATH
                    + " (Debian's golang-go and"
                    + " golang-github-jackc-pgx-v4-dev)",
            List.of(
                List.of(
                    "go",
                    "build",
                    "-o",
                    binary.toString(),
                    EXAMPLES.resolve("go/main.go").toString()),
                List.of(binary.toString(), "go-1"))));
    return examples;
  }

  /** A Java example: compiled here (in this JVM), run in a JVM of its own. */
  private Example java(String name) throws IOException {
    Path classes = Files.createDirectories(dir.resolve(name));
    String classPath = classes + File.pathSeparator + System.getProperty("java.class.path");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    StringWriter messages = new StringWriter();
    boolean compiled =
        javac
            .getTask(
                messages,
                null,
                null,
                List.of("-d", classes.toString(), "-cp", classPath, "-proc:none"),
                null,
                javac
                    .getStandardFileManager(null, null, StandardCharsets.UTF_8)
                    .getJavaFileObjects(EXAMPLES.resolve(name + "/PlaceOrder.java")))
            .call();
    assertThat(compiled).as("examples/" + name + " compiles: " + messages).isTrue();
    return new Example(
        name,
        null,
        List.of(
            List.of(
                java,
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-cp",
                classPath,
                "PlaceOrder",
                name + "-1")));
  }

  private static List<String> psql(String... args) {
    List<String> command = new ArrayList<>(List.of("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"));
    command.addAll(List.of(args));
    return command;
  }

  /** Runs the steps one after the other, with the database in the PG* variables. */
  private void run(List<List<String>> steps, String what) throws IOException, InterruptedException {
    int n = 0;
    for (List<String> step : steps) {
      Path log = dir.resolve(what.replaceAll("[^a-z0-9]+", "-") + "-" + n++ + ".log");
      ProcessBuilder builder =
          new ProcessBuilder(step)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
      Map<String, String> env = builder.environment();
      env.put("PGHOST", Services.pgHost());
      env.put("PGPORT", Integer.toString(Services.pgPort()));
      env.put("PGUSER", Services.pgUser());
      env.put("PGPASSWORD", Services.pgPassword());
      env.put("PGDATABASE", database);
      env.put("GOPATH", GOPATH);
      env.put("GO111MODULE", "off");
      env.put("GOCACHE", Path.of(System.getProperty("user.home"), ".cache/go-build").toString());
      Process process = builder.start();
      if (!process.waitFor(EXAMPLE_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new AssertionError(what + ": " + step + " did not end within " + EXAMPLE_TIMEOUT);
      }
      if (process.exitValue() != 0) {
        throw new AssertionError(
            what
                + ": "
                + step
                + " exited "
                + process.exitValue()
                + ":\n"
                + Files.readString(log, StandardCharsets.UTF_8));
      }
    }
  }

  private static boolean onPath(String program) {
    return canRun("sh", "-c", "command -v " + program);
  }

  private static boolean canRun(String... command) {
    try {
      Process process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
