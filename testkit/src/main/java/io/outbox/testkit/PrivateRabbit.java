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
import java.util.Map;
import java.util.UUID;
import java.util.function.IntFunction;

/**
 * A RabbitMQ node of a test's own with one listener, TLS (amqps) or plain (amqp, with extra {@code
 * rabbitmq.conf} lines such as {@code max_message_size}), run from the machine's {@code
 * rabbitmq-server} as a child process with its own node name, ports, Erlang cookie and data
 * directory, so the shared broker is never touched. It has the default {@code guest/guest} user,
 * allowed from the loopback address. {@link #stop()} and {@link #restart()} take it down and up
 * again with its data; {@link #close()} stops it with {@code rabbitmqctl stop} and deletes its
 * directory.
 */
public final class PrivateRabbit implements AutoCloseable {

  private static final String HOST = "127.0.0.1";
  private static final Path BIN = Path.of("/usr/lib/rabbitmq/bin");
  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

  private final ServerHome home;
  private final Path dir;
  private final String node;
  private final int port;
  private final boolean tls;
  private final Map<String, String> environment;
  private Process process;

  private PrivateRabbit(
      ServerHome home, String node, int port, boolean tls, Map<String, String> environment) {
    this.home = home;
    this.dir = home.dir();
    this.node = node;
    this.port = port;
    this.tls = tls;
    this.environment = environment;
  }

  /**
   * Starts a node whose TLS listener on {@code 127.0.0.1} presents {@code certificates}' server
   * certificate, and waits until it accepts connections.
   *
   * @throws IllegalStateException when rabbitmq-server is missing or the node does not come up
   *     (with the tail of its output)
   */
  public static PrivateRabbit start(TestCertificates certificates) {
    return start(
        true,
        port ->
            List.of(
                "listeners.tcp = none",
                "listeners.ssl.default = " + HOST + ":" + port,
                "ssl_options.cacertfile = " + certificates.caCertificate(),
                "ssl_options.certfile = " + certificates.serverCertificate(),
                "ssl_options.keyfile = " + certificates.serverKey(),
                "ssl_options.verify = verify_none",
                "ssl_options.fail_if_no_peer_cert = false"));
  }

  /**
   * Starts a node with a plain AMQP listener on {@code 127.0.0.1} and {@code extraConfig} added to
   * its {@code rabbitmq.conf} (e.g. {@code "max_message_size = 1048576"}), and waits until it
   * accepts connections.
   *
   * @throws IllegalStateException when rabbitmq-server is missing or the node does not come up
   */
  public static PrivateRabbit startPlain(List<String> extraConfig) {
    return start(
        false,
        port -> {
          List<String> lines = new ArrayList<>();
          lines.add("listeners.tcp.default = " + HOST + ":" + port);
          lines.addAll(extraConfig);
          return lines;
        });
  }

  private static PrivateRabbit start(boolean tls, IntFunction<List<String>> listenerConfig) {
    if (!Files.isExecutable(BIN.resolve("rabbitmq-server"))) {
      throw new IllegalStateException(
          "no " + BIN.resolve("rabbitmq-server") + "; scripts/services.sh up installs RabbitMQ");
    }
    ServerHome home = ServerHome.create("rabbitmq");
    Path dir = home.dir();
    int[] ports = LocalPorts.free(HOST, 2);
    String node = "outbox-" + UUID.randomUUID().toString().substring(0, 8) + "@localhost";
    String config = String.join("\n", listenerConfig.apply(ports[0])) + "\n";
    try {
      Files.writeString(dir.resolve("rabbitmq.conf"), config, StandardCharsets.UTF_8);
      Files.createDirectories(dir.resolve("home"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the private RabbitMQ's config into " + dir, e);
    }
    Map<String, String> env =
        Map.ofEntries(
            // HOME holds the node's own Erlang cookie; rabbitmqctl must see the same one.
            Map.entry("HOME", dir.resolve("home").toString()),
            Map.entry("RABBITMQ_NODENAME", node),
            Map.entry("RABBITMQ_NODE_IP_ADDRESS", HOST),
            Map.entry("RABBITMQ_DIST_PORT", Integer.toString(ports[1])),
            Map.entry("RABBITMQ_CONFIG_FILE", dir.resolve("rabbitmq.conf").toString()),
            Map.entry("RABBITMQ_MNESIA_BASE", dir.resolve("mnesia").toString()),
            Map.entry("RABBITMQ_LOG_BASE", dir.resolve("log").toString()),
            Map.entry("RABBITMQ_ENABLED_PLUGINS_FILE", dir.resolve("enabled_plugins").toString()),
            Map.entry("RABBITMQ_PID_FILE", dir.resolve("rabbit.pid").toString()));
    PrivateRabbit rabbit = new PrivateRabbit(home, node, ports[0], tls, env);
    home.reapWith(rabbit::destroyNow);
    try {
      rabbit.launch();
    } catch (RuntimeException e) {
      rabbit.close();
      throw e;
    }
    return rabbit;
  }

  /** The listener's port on {@code 127.0.0.1} (TLS or plain, as started). */
  public int port() {
    return port;
  }

  /** {@code amqps://guest:guest@<host>:<port>/%2f}, or {@code amqp://...} for a plain node. */
  public String uri(String host) {
    return (tls ? "amqps" : "amqp") + "://guest:guest@" + host + ":" + port + "/%2f";
  }

  /** The node's output so far. */
  public String output() {
    try {
      return Files.readString(outputFile(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(cannot read " + outputFile() + ": " + e.getMessage() + ")";
    }
  }

  /** {@link #uri(String)} on {@code 127.0.0.1}, where the node listens. */
  public String amqpUri() {
    return uri(HOST);
  }

  /** Whether the node's process is running. */
  public synchronized boolean isRunning() {
    return process != null && process.isAlive();
  }

  /**
   * Stops the node as an operator would ({@code rabbitmqctl stop}, forcibly if that fails) and
   * waits until it exited. Its data directory (durable queues and their persistent messages) stays
   * for {@link #restart()}.
   */
  public synchronized void stop() {
    if (process != null && process.isAlive()) {
      try {
        Process ctl =
            builder(List.of(BIN.resolve("rabbitmqctl").toString(), "-n", node, "stop"))
                .redirectOutput(ProcessBuilder.Redirect.appendTo(outputFile().toFile()))
                .start();
        ProcessWait.exited(ctl, STOP_TIMEOUT);
        ProcessWait.exited(process, STOP_TIMEOUT);
      } catch (IOException e) {
        // Stopped forcibly below.
      }
      destroyNow();
    }
    process = null;
  }

  /**
   * Starts the stopped node again with the same name, port and data directory, and waits until it
   * accepts connections.
   *
   * @throws IllegalStateException when the node is closed or still running, or does not come up
   */
  public synchronized void restart() {
    if (home.closed()) {
      throw new IllegalStateException(this + " is closed");
    }
    if (isRunning()) {
      throw new IllegalStateException(this + " is still running");
    }
    launch();
  }

  /** Stops the node ({@code rabbitmqctl stop}, forcibly if that fails) and deletes its files. */
  @Override
  public synchronized void close() {
    home.close(this::stop);
  }

  @Override
  public String toString() {
    return "PrivateRabbit["
        + node
        + (tls ? ", amqps on " : ", amqp on ")
        + HOST
        + ":"
        + port
        + ", "
        + dir
        + "]";
  }

  private synchronized void launch() {
    try {
      process =
          builder(List.of(BIN.resolve("rabbitmq-server").toString()))
              .redirectOutput(ProcessBuilder.Redirect.appendTo(outputFile().toFile()))
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start rabbitmq-server for " + this, e);
    }
    new ProcessWait(
            process,
            START_TIMEOUT,
            Duration.ofMillis(200),
            this,
            what -> failure("rabbitmq-server " + what))
        .until(() -> LocalPorts.accepts(HOST, port));
  }

  private ProcessBuilder builder(List<String> command) {
    ProcessBuilder b =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    b.environment().putAll(environment);
    return b;
  }

  private Path outputFile() {
    return dir.resolve("rabbitmq.out");
  }

  private IllegalStateException failure(String what) {
    String output = output();
    return new IllegalStateException(
        "private RabbitMQ "
            + node
            + ": "
            + what
            + "; its output ends with:\n"
            + output.substring(Math.max(0, output.length() - 4000)));
  }

  private void destroyNow() {
    Process p = process;
    if (p != null && p.isAlive()) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
  }
}
