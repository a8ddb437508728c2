package io.outbox.relay.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * {@code outbox-relay run --config FILE} as a real, separate JVM: the configuration is written to a
 * file, standard output and error go to a log file that tests read. {@link #kill9()} is a SIGKILL
 * (no shutdown hook runs), {@link #terminate(Duration)} a SIGTERM. Started through {@link
 * RelayProcesses}, which kills whatever is still running after each test.
 */
final class RelayProcess {
  private static final String MAIN = "io.outbox.relay.cli.Main";

  private final String name;
  private final Path logFile;
  private final Process process;

  private RelayProcess(String name, Path logFile, Process process) {
    this.name = name;
    this.logFile = logFile;
    this.process = process;
  }

  /**
   * Starts a relay.
   *
   * @param name a short name for messages and file names ({@code a}, {@code b}...)
   * @param dir where the configuration and the log file are written
   * @param hocon the whole configuration file
   */
  static RelayProcess start(String name, Path dir, String hocon) {
    return start(name, dir, hocon, Map.of(), "run");
  }

  /**
   * Starts {@code outbox-relay <command...> --config FILE} with extra environment variables.
   *
   * @param command the subcommand and its options, e.g. {@code check-config}
   */
  static RelayProcess start(
      String name, Path dir, String hocon, Map<String, String> environment, String... command) {
    try {
      Files.createDirectories(dir);
      Path config = dir.resolve(name + ".conf");
      Path log = dir.resolve(name + ".log");
      Files.writeString(config, hocon, StandardCharsets.UTF_8);
      List<String> line = new ArrayList<>();
      line.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      line.add("-Xmx256m");
      line.add("-XX:+UseSerialGC"); // two cores: no parallel GC threads fighting the test JVM
      line.add("-cp");
      line.add(System.getProperty("java.class.path"));
      line.add(MAIN);
      line.addAll(List.of(command));
      line.add("--config");
      line.add(config.toAbsolutePath().toString());
      ProcessBuilder builder =
          new ProcessBuilder(line)
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
      builder.environment().putAll(environment);
      Process process = builder.start();
      return new RelayProcess(name, log, process);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start relay process " + name + " in " + dir, e);
    }
  }

  String name() {
    return name;
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  Path logFile() {
    return logFile;
  }

  /** Everything the process wrote so far. */
  String log() {
    try {
      return Files.readString(logFile, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + logFile, e);
    }
  }

  /** The last {@code lines} lines of the log. */
  String tail(int lines) {
    List<String> all = log().lines().toList();
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }

  boolean logContains(String text) {
    return log().contains(text);
  }

  /** The logback timestamp of the first log line containing {@code text}. */
  Optional<Instant> loggedAt(String text) {
    return loggedAt(text, Instant.MIN);
  }

  /** The timestamp of the first log line containing {@code text} logged at or after {@code t}. */
  Optional<Instant> loggedAt(String text, Instant t) {
    return log()
        .lines()
        .filter(l -> l.contains(text))
        .map(RelayProcess::timestamp)
        .flatMap(Optional::stream)
        .filter(at -> !at.isBefore(t))
        .findFirst();
  }

  /** A log line's logback timestamp; empty for lines without one (stack traces). */
  private static Optional<Instant> timestamp(String line) {
    int space = line.indexOf(' ');
    try {
      return Optional.of(OffsetDateTime.parse(line.substring(0, Math.max(0, space))).toInstant());
    } catch (java.time.format.DateTimeParseException e) {
      return Optional.empty();
    }
  }

  /** SIGKILL, and waits until the process is gone. */
  void kill9() {
    process.destroyForcibly();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("relay " + name + " (pid " + pid() + ") survived SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while killing relay " + name, e);
    }
  }

  /** SIGSTOP: the process freezes with every connection open (a GC or VM pause, a hung host). */
  void freeze() {
    signal("STOP");
  }

  /** SIGCONT: a frozen process runs on. */
  void thaw() {
    signal("CONT");
  }

  private void signal(String signal) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + signal + " " + pid() + " failed");
      }
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot run kill -" + signal + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling relay " + name, e);
    }
  }

  /**
   * SIGTERM, then waits for the exit.
   *
   * @return the exit code, or empty if the process was still running after {@code timeout}
   */
  Optional<Integer> terminate(Duration timeout) {
    process.destroy();
    return awaitExit(timeout);
  }

  /** The exit code once the process ended within {@code timeout}, or empty. */
  Optional<Integer> awaitExit(Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)
          ? Optional.of(process.exitValue())
          : Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  @Override
  public String toString() {
    return "relay " + name + " (pid " + pid() + ", log " + logFile + ")";
  }
}
