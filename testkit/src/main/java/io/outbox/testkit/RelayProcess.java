package io.outbox.testkit;

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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * {@code outbox-relay run --config FILE} as a real, separate JVM on this JVM's class path (which
 * must hold the relay's daemon module): the configuration is written to a file, standard output and
 * error go to a log file that callers read. {@link #kill9()} is a SIGKILL (no shutdown hook runs),
 * {@link #terminate(Duration)} a SIGTERM, {@link #freeze()} a SIGSTOP. A process still running when
 * this JVM exits is killed by a shutdown hook.
 */
public final class RelayProcess {
  private static final String MAIN = "io.outbox.relay.cli.Main";

  /**
   * An entry of the environment given to {@link #start(String, Path, String, Map, String...)} that
   * sets the process's maximum heap ({@code -Xmx}, e.g. {@code 128m}) instead of 256m.
   */
  public static final String MAX_HEAP = "OUTBOX_RELAY_TEST_MAX_HEAP";

  private static final Set<RelayProcess> RUNNING = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> RUNNING.stream().filter(RelayProcess::isAlive).forEach(RelayProcess::kill9),
                "relay-processes-cleanup"));
  }

  private final String name;
  private final Path dir;
  private final Path logFile;
  private final Map<String, String> environment;
  private final List<String> command;
  private final Process process;

  private RelayProcess(
      String name,
      Path dir,
      Path logFile,
      Map<String, String> environment,
      List<String> command,
      Process process) {
    this.name = name;
    this.dir = dir;
    this.logFile = logFile;
    this.environment = environment;
    this.command = command;
    this.process = process;
  }

  /**
   * Starts a relay.
   *
   * @param name a short name for messages and file names ({@code a}, {@code b}...)
   * @param dir where the configuration and the log file are written
   * @param hocon the whole configuration file
   */
  public static RelayProcess start(String name, Path dir, String hocon) {
    return start(name, dir, hocon, Map.of(), "run");
  }

  /**
   * Starts {@code outbox-relay <command...> --config FILE} with extra environment variables.
   *
   * @param command the subcommand and its options, e.g. {@code check-config}
   */
  public static RelayProcess start(
      String name, Path dir, String hocon, Map<String, String> environment, String... command) {
    try {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve(name + ".conf"), hocon, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the configuration of relay " + name, e);
    }
    return launch(name, dir, Map.copyOf(environment), List.of(command), false);
  }

  /**
   * Starts the same command with the same configuration again (after this process ended), its
   * output appended to the same log file.
   *
   * @throws IllegalStateException while this process is still running
   */
  public RelayProcess restart() {
    if (isAlive()) {
      throw new IllegalStateException(this + " is still running");
    }
    RUNNING.remove(this);
    return launch(name, dir, environment, command, true);
  }

  private static RelayProcess launch(
      String name,
      Path dir,
      Map<String, String> environment,
      List<String> command,
      boolean append) {
    Path config = dir.resolve(name + ".conf");
    Path log = dir.resolve(name + ".log");
    List<String> line = new ArrayList<>();
    line.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    line.add("-Xmx" + environment.getOrDefault(MAX_HEAP, "256m"));
    line.add("-XX:+UseSerialGC"); // two cores: no parallel GC threads fighting the caller's JVM
    // A test's relay lives seconds to minutes: the C2 compiler costs it more CPU than it saves
    // (a 1,000-event drain: 5.4-5.6 s of CPU with it, 3.2-3.3 s without; 20,000 events: 6.7-6.8 s
    // against 3.8-4.6 s), CPU the suite's other JVMs need on two cores.
    line.add("-XX:TieredStopAtLevel=1");
    line.add("-cp");
    line.add(System.getProperty("java.class.path"));
    line.add(MAIN);
    line.addAll(command);
    line.add("--config");
    line.add(config.toAbsolutePath().toString());
    ProcessBuilder builder =
        new ProcessBuilder(line)
            .redirectErrorStream(true)
            .redirectOutput(
                append
                    ? ProcessBuilder.Redirect.appendTo(log.toFile())
                    : ProcessBuilder.Redirect.to(log.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    builder.environment().putAll(environment);
    try {
      RelayProcess p = new RelayProcess(name, dir, log, environment, command, builder.start());
      RUNNING.removeIf(r -> !r.isAlive());
      RUNNING.add(p);
      return p;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start relay process " + name + " in " + dir, e);
    }
  }

  public String name() {
    return name;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public Path logFile() {
    return logFile;
  }

  /** Everything the process wrote so far. */
  public String log() {
    try {
      return Files.readString(logFile, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + logFile, e);
    }
  }

  /** The last {@code lines} lines of the log. */
  public String tail(int lines) {
    List<String> all = log().lines().toList();
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }

  public boolean logContains(String text) {
    return log().contains(text);
  }

  /** The logback timestamp of the first log line containing {@code text}. */
  public Optional<Instant> loggedAt(String text) {
    return loggedAt(text, Instant.MIN);
  }

  /** The timestamp of the first log line containing {@code text} logged at or after {@code t}. */
  public Optional<Instant> loggedAt(String text, Instant t) {
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

  /**
   * SIGSTOP: the process freezes as in a long GC or VM pause; its sockets stay open and the kernel
   * keeps answering for them, so its database sessions (and their locks) live on.
   */
  public void freeze() {
    signal("STOP");
  }

  /** SIGCONT: a frozen process wakes up where it stopped. */
  public void thaw() {
    signal("CONT");
  }

  private void signal(String signal) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + signal + " " + pid() + " failed");
      }
    } catch (java.io.IOException e) {
      throw new IllegalStateException("kill -" + signal + " " + pid() + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling relay " + name, e);
    }
  }

  /** SIGKILL, and waits until the process is gone. */
  public void kill9() {
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

  /**
   * SIGTERM, then waits for the exit.
   *
   * @return the exit code, or empty if the process was still running after {@code timeout}
   */
  public Optional<Integer> terminate(Duration timeout) {
    process.destroy();
    return awaitExit(timeout);
  }

  /** The exit code once the process ended within {@code timeout}, or empty. */
  public Optional<Integer> awaitExit(Duration timeout) {
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
