package io.outbox.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.common.Uuid;

/**
 * Kafka's own programs as child JVMs of a {@link PrivateKafka}: the storage tool that formats its
 * directory and the broker itself, run from the jars {@code scripts/services.sh up} copied into
 * {@code .run/kafka/lib}, their output appended to the directory's {@code kafka.log}: the log a
 * failure quotes and {@link #keepLog()} keeps.
 */
final class BrokerJvm {

  private static final Duration FORMAT_TIMEOUT = Duration.ofSeconds(60);
  private static final int LOG_TAIL_LINES = 40;

  private final Path lib;
  private final Path dir;
  private final String bootstrap;
  private final String owner;

  /**
   * @param lib the broker jars ({@link #jars()})
   * @param dir the node's directory, holding {@code server.properties} and {@code logback.xml}
   * @param bootstrap the node's address, for failure messages
   * @param owner the private Kafka, as its messages name it
   */
  BrokerJvm(Path lib, Path dir, String bootstrap, String owner) {
    this.lib = lib;
    this.dir = dir;
    this.bootstrap = bootstrap;
    this.owner = owner;
  }

  /** Formats the storage once, as a standalone controller quorum of this one node. */
  void format(Map<String, String> scramUsers) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "-Xmx256m",
                // A short-lived tool: the C1 compiler and a serial GC start it sooner.
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "kafka.tools.StorageTool",
                "format",
                "-t",
                Uuid.randomUuid().toString(),
                "-c",
                dir.resolve("server.properties").toString(),
                "--standalone"));
    scramUsers.forEach(
        (name, password) ->
            args.addAll(
                List.of(
                    "--add-scram", "SCRAM-SHA-512=[name=" + name + ",password=" + password + "]")));
    Process formatter = start(args);
    if (!ProcessWait.exited(formatter, FORMAT_TIMEOUT)) {
      formatter.destroyForcibly();
      throw failure("formatting its storage did not finish within " + FORMAT_TIMEOUT.toSeconds());
    }
    if (formatter.exitValue() != 0) {
      throw failure("formatting its storage failed with exit code " + formatter.exitValue());
    }
  }

  /** Starts the broker (and controller) of the formatted directory; does not wait for it. */
  Process startBroker() {
    return start(
        List.of(
            "-Xms128m",
            "-Xmx384m",
            // Starts in about half the time on a busy two-core machine; a test's traffic does
            // not need the C2 compiler.
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "kafka.Kafka",
            dir.resolve("server.properties").toString()));
  }

  /** A failure of the node, with the tail of its log. */
  IllegalStateException failure(String what) {
    return new IllegalStateException(
        "private Kafka at "
            + bootstrap
            + ": "
            + what
            + "; log "
            + logFile()
            + " ends with:\n"
            + logTail());
  }

  /**
   * Copies the broker's log (every start of it: restarts append) into the build's {@code
   * target/private-kafka-logs/} before the directory goes, so that a test that failed against this
   * broker can be read against what the broker did. Nothing when there is no {@code target}.
   */
  void keepLog() {
    Path target = Path.of("target");
    if (!Files.isDirectory(target) || !Files.exists(logFile())) {
      return;
    }
    try {
      Path kept = Files.createDirectories(target.resolve("private-kafka-logs"));
      Files.copy(
          logFile(),
          kept.resolve(dir.getFileName() + ".kafka.log"),
          StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      // The log is evidence, not a result: a copy that fails does not fail the test.
    }
  }

  private Process start(List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Dlogback.configurationFile=" + dir.resolve("logback.xml"));
    command.add("-cp");
    command.add(lib + "/*");
    command.addAll(args);
    try {
      return new ProcessBuilder(command)
          .directory(dir.toFile())
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()))
          .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + command.get(0) + " for " + owner, e);
    }
  }

  private Path logFile() {
    return dir.resolve("kafka.log");
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(logFile(), StandardCharsets.UTF_8);
      return String.join(
          "\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
    } catch (IOException e) {
      return "(cannot read it: " + e.getMessage() + ")";
    }
  }

  /** {@code <repo>/.run/kafka/lib}, checked to hold the broker. */
  static Path jars() {
    Path root = repositoryRoot();
    Path lib = root.resolve(".run/kafka/lib");
    boolean hasBroker;
    try (Stream<Path> jars = Files.isDirectory(lib) ? Files.list(lib) : Stream.empty()) {
      hasBroker = jars.anyMatch(p -> p.getFileName().toString().matches("kafka_2\\.\\d+-.*\\.jar"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + lib, e);
    }
    if (!hasBroker) {
      throw new IllegalStateException(
          "no Kafka broker jars in "
              + lib
              + "; run scripts/services.sh up once (it copies them there from Maven Central)");
    }
    return lib;
  }

  private static Path repositoryRoot() {
    String home = System.getenv(PrivateKafka.HOME);
    if (home != null && !home.isBlank()) {
      Path root = Path.of(home).toAbsolutePath();
      if (!Files.isRegularFile(root.resolve("scripts/services.sh"))) {
        throw new IllegalStateException(
            PrivateKafka.HOME
                + " = "
                + home
                + " is not the outbox-relay repository (no scripts/services.sh)");
      }
      return root;
    }
    Path start = Path.of("").toAbsolutePath();
    for (Path p = start; p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("scripts/services.sh"))) {
        return p;
      }
    }
    throw new IllegalStateException(
        "cannot find the outbox-relay repository (a directory with scripts/services.sh) above "
            + start
            + "; set "
            + PrivateKafka.HOME);
  }
}
