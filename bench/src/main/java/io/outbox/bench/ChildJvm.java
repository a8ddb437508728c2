package io.outbox.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A JVM process under measurement (the relay, the Debezium baseline): started with a class path and
 * a main class, its output copied to a log file and handed line by line to a listener, its CPU time
 * and peak RSS readable while it runs ({@link ProcSample}).
 */
final class ChildJvm implements Drainer, AutoCloseable {
  private static final int TAIL_LINES = 30;

  private final String name;
  private final Process process;
  private final Thread reader;
  private final Deque<String> tail = new ArrayDeque<>();

  private ChildJvm(String name, Process process, Path log, Consumer<String> lines)
      throws IOException {
    this.name = name;
    this.process = process;
    PrintWriter file = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true);
    this.reader =
        new Thread(() -> copy(process, file, lines), "bench-" + name + "-output-" + process.pid());
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts {@code java} (of this JVM) with {@code jvmOptions -cp classpath mainClass args}.
   *
   * @param log where the process's stdout and stderr go
   * @param environment added to this process's environment
   * @param lines called with every output line, on the output thread
   */
  static ChildJvm start(
      String name,
      String classpath,
      List<String> jvmOptions,
      String mainClass,
      List<String> args,
      Path log,
      Map<String, String> environment,
      Consumer<String> lines)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(classpath);
    command.add(mainClass);
    command.addAll(args);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().putAll(environment);
    Process process = builder.start();
    return new ChildJvm(name, process, log, lines);
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** CPU time and peak RSS so far; null once the process is gone. */
  @Override
  public ProcSample sample() {
    return ProcSample.of(process.pid());
  }

  /** Fails, with the last lines of output, if the process has exited. */
  @Override
  public void checkAlive() {
    if (!process.isAlive()) {
      throw new IllegalStateException(
          name + " exited with code " + process.exitValue() + "; its last output:\n" + tail());
    }
  }

  /** The last lines the process printed. */
  String tail() {
    synchronized (tail) {
      return String.join("\n", tail);
    }
  }

  /** SIGTERM, wait up to {@code grace}, then SIGKILL. Returns the exit code. */
  int stop(Duration grace) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      process.waitFor();
    }
    reader.join(TimeUnit.SECONDS.toMillis(5));
    return process.exitValue();
  }

  /** Stops the process if it still runs (SIGTERM, then SIGKILL after 30 s or on interrupt). */
  @Override
  public void close() {
    if (process.isAlive()) {
      try {
        stop(Duration.ofSeconds(30));
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  private void copy(Process p, PrintWriter file, Consumer<String> lines) {
    try (BufferedReader in =
            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        file) {
      String line;
      while ((line = in.readLine()) != null) {
        file.println(line);
        synchronized (tail) {
          tail.addLast(line);
          if (tail.size() > TAIL_LINES) {
            tail.removeFirst();
          }
        }
        lines.accept(line);
      }
    } catch (IOException e) {
      // The process is gone; its exit code tells the rest.
    }
  }
}
