package io.outbox.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A broker binary of the machine (nats-server, redis-server) run as a child process of a test on a
 * port and in a directory of its own, so that the test can stop, kill and start it again (same
 * port, same data) without touching the shared services of {@code scripts/services.sh}: what {@link
 * PrivateNats} and {@link PrivateRedis} share. Its output goes to a file in its directory, which
 * {@link #close()} deletes.
 */
public abstract class PrivateServer implements AutoCloseable {

  static final String HOST = "127.0.0.1";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  private final String name;
  private final ServerHome home;
  private final Path dir;
  private final int port;
  private final List<String> command;
  private Process process;

  /**
   * Starts {@code binary} with the arguments {@code arguments} makes of a free port and a fresh
   * directory, and waits until it accepts connections.
   *
   * @param binary the program's name; looked up in /usr/sbin, /usr/bin, /usr/local/bin
   * @throws IllegalStateException when the program is missing or does not come up (with the tail of
   *     its output)
   */
  PrivateServer(String binary, Arguments arguments) {
    String program = locate(binary);
    this.home = ServerHome.create(binary);
    this.dir = home.dir();
    this.name = binary;
    this.port = LocalPorts.free(HOST, 1)[0];
    List<String> line = new ArrayList<>(List.of(program));
    line.addAll(arguments.of(port, dir));
    this.command = List.copyOf(line);
    home.reapWith(this::destroyNow);
    try {
      launch();
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** The arguments of the program for a port and a directory. */
  @FunctionalInterface
  interface Arguments {
    List<String> of(int port, Path dir);
  }

  /** The port the server listens on, on {@code 127.0.0.1}. */
  public final int port() {
    return port;
  }

  /** Whether the server process is alive. */
  public final synchronized boolean isRunning() {
    return process != null && process.isAlive();
  }

  /** SIGTERM, waiting until the process is gone (SIGKILL after 30 s). */
  public final synchronized void stop() {
    if (isRunning()) {
      process.destroy();
      if (!ProcessWait.exited(process, STOP_TIMEOUT)) {
        destroyNow();
      }
    }
  }

  /** SIGKILL, waiting until the process is gone. */
  public final synchronized void kill() {
    destroyNow();
  }

  /** Starts the stopped (or killed) server again, on the same port and with the same data. */
  public final synchronized void restart() {
    if (home.closed()) {
      throw new IllegalStateException(this + " is closed");
    }
    stop();
    launch();
  }

  /** Stops the server and deletes its directory. */
  @Override
  public final synchronized void close() {
    home.close(this::stop);
  }

  /** What the server printed so far. */
  public final String output() {
    try {
      return Files.readString(dir.resolve(name + ".out"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(no output: " + e.getMessage() + ")";
    }
  }

  @Override
  public String toString() {
    return "private " + name + " on " + HOST + ":" + port + " (" + dir + ")";
  }

  private void launch() {
    try {
      process =
          new ProcessBuilder(command)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve(name + ".out").toFile()))
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + this, e);
    }
    new ProcessWait(process, START_TIMEOUT, Duration.ofMillis(50), this, this::startFailure)
        .until(() -> LocalPorts.accepts(HOST, port));
  }

  private IllegalStateException startFailure(String what) {
    String output = output();
    destroyNow();
    return new IllegalStateException(
        this
            + " "
            + what
            + "; its output ends with:\n"
            + output.substring(Math.max(0, output.length() - 3000)));
  }

  private void destroyNow() {
    Process p = process;
    if (p != null && p.isAlive()) {
      p.destroyForcibly();
      ProcessWait.exited(p, STOP_TIMEOUT);
    }
  }

  private static String locate(String binary) {
    for (String dir : List.of("/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin")) {
      Path p = Path.of(dir, binary);
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    throw new IllegalStateException(
        "no " + binary + " on this machine; scripts/services.sh up installs it");
  }
}
