package io.outbox.relay.demo;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code outbox-relay run --config FILE} in a JVM of its own, on this JVM's class path: the relay
 * of {@code demo --exactly-once}, which the demo kills with a SIGKILL (no shutdown hook, no
 * settlement) to show that a {@code read_committed} consumer still sees every event once.
 */
final class RelayChild implements AutoCloseable {
  private static final String MAIN = "io.outbox.relay.cli.Main";

  private final Process process;
  private final Thread cleanup;

  private RelayChild(Process process) {
    this.process = process;
    // Ctrl-C of the demo must not leave a relay running behind it.
    this.cleanup = new Thread(process::destroyForcibly, "demo-relay-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
  }

  /**
   * Starts the relay on {@code config}; its standard output and error are appended to {@code log}.
   */
  static RelayChild start(Path config, Path log) throws IOException {
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-cp",
            System.getProperty("java.class.path"),
            MAIN,
            "run",
            "--config",
            config.toString());
    Process p =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .start();
    return new RelayChild(p);
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** SIGKILL, then waits until the process is gone. */
  void kill9() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the relay (pid " + pid() + ") survived a SIGKILL");
    }
  }

  /** SIGTERM (the relay drains and settles), a SIGKILL if it has not ended within {@code grace}. */
  int stop(Duration grace) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      kill9();
    }
    return process.exitValue();
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      Runtime.getRuntime().removeShutdownHook(cleanup);
    } catch (IllegalStateException e) {
      // Already shutting down: the hook runs anyway.
    }
  }
}
