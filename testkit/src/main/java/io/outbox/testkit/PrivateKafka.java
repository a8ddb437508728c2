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
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Uuid;

/**
 * A single-node KRaft Kafka (broker and controller in one process) of a test's own, run as a child
 * JVM on free ports with its own data directory, so that a test can stop, kill and restart it
 * without touching the shared broker of {@link Services#kafkaBootstrap()}.
 *
 * <p>It runs the broker jars that {@code scripts/services.sh up} copied into {@code .run/kafka/lib}
 * at the repository root (found from {@code OUTBOX_RELAY_HOME}, or by walking up from the working
 * directory to the directory holding {@code scripts/services.sh}). The broker's output goes to
 * {@code kafka.log} in its directory; a failed start names the log and shows its tail.
 */
public final class PrivateKafka implements AutoCloseable {

  /**
   * The logback configuration of a Kafka JVM a test starts (this broker, a Connect worker): INFO to
   * the console, without the client configurations' dumps.
   */
  public static final String LOGBACK =
      """
      <configuration>
        <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
          <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n</pattern></encoder>
        </appender>
        <logger name="org.apache.kafka.common.config.AbstractConfig" level="WARN"/>
        <root level="INFO"><appender-ref ref="OUT"/></root>
      </configuration>
      """;

  /** Environment variable naming the repository root, when the working directory is elsewhere. */
  public static final String HOME = "OUTBOX_RELAY_HOME";

  private static final String HOST = "127.0.0.1";
  // Generous: on a 2-core machine under a full build a broker start has taken more than 60 s.
  private static final Duration START_TIMEOUT = Duration.ofSeconds(180);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration FORMAT_TIMEOUT = Duration.ofSeconds(60);
  private static final int LOG_TAIL_LINES = 40;

  private final Path lib;
  private final Path dir;
  private final int port;
  private final int controllerPort;
  private final TestCertificates tls; // null: PLAINTEXT only
  private final Map<String, String> scramUsers;
  private final Map<String, String> brokerSettings;
  private final int sslPort;
  private final int saslSslPort;
  private int proxiedPort; // 0: no proxied listener
  private FaultProxy proxy; // null: no proxied listener
  private final Thread reaper = new Thread(this::destroyNow, "private-kafka-reaper");
  private volatile Process process;
  private boolean closed;

  private PrivateKafka(
      Path lib,
      Path dir,
      int[] ports,
      TestCertificates tls,
      Map<String, String> scramUsers,
      Map<String, String> brokerSettings) {
    this.lib = lib;
    this.dir = dir;
    this.port = ports[0];
    this.controllerPort = ports[1];
    this.tls = tls;
    this.scramUsers = Map.copyOf(scramUsers);
    this.brokerSettings = new java.util.TreeMap<>(brokerSettings);
    this.sslPort = tls == null ? 0 : ports[2];
    this.saslSslPort = tls == null ? 0 : ports[3];
  }

  /**
   * Formats a fresh data directory, starts the broker and waits until it answers a describe-cluster
   * request.
   *
   * @throws IllegalStateException when the jars are missing or the broker does not come up (with
   *     the tail of its log)
   */
  public static PrivateKafka start() {
    return start(null, Map.of(), Map.of(), false);
  }

  /**
   * Like {@link #start()}, with broker settings ({@code server.properties} lines) that replace this
   * class's defaults or add to them, e.g. {@code auto.create.topics.enable=false}.
   */
  public static PrivateKafka startWith(Map<String, String> brokerSettings) {
    return start(null, Map.of(), brokerSettings, false);
  }

  /**
   * Like {@link #start()}, with one more PLAINTEXT listener that clients reach only through a
   * {@link FaultProxy}: the listener advertises the proxy's port, so that every connection of a
   * client bootstrapped from {@link #proxiedBootstrap()}, including those to the partition leaders
   * that metadata names, goes through {@link #proxy()}. The broker's own traffic stays on {@link
   * #bootstrap()}. The proxy closes with the broker.
   */
  public static PrivateKafka startBehindProxy() {
    return start(null, Map.of(), Map.of(), true);
  }

  /**
   * Like {@link #start()}, with two more listeners that present {@code certificates}' server
   * certificate: {@link #sslBootstrap() SSL} and {@link #saslSslBootstrap() SASL_SSL} with
   * SCRAM-SHA-512 for {@code scramUsers} (name to password), created when the storage is formatted.
   * The PLAINTEXT listener of {@link #bootstrap()} stays (the broker talks to itself on it).
   */
  public static PrivateKafka startWithTls(
      TestCertificates certificates, Map<String, String> scramUsers) {
    return start(
        java.util.Objects.requireNonNull(certificates, "certificates"),
        scramUsers,
        Map.of(),
        false);
  }

  private static PrivateKafka start(
      TestCertificates tls,
      Map<String, String> scramUsers,
      Map<String, String> brokerSettings,
      boolean proxied) {
    Path lib = libDir();
    Path dir;
    try {
      dir = Files.createTempDirectory("outbox-private-kafka-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a data directory for a private Kafka", e);
    }
    int[] ports = LocalPorts.free(HOST, (tls == null ? 2 : 4) + (proxied ? 1 : 0));
    PrivateKafka kafka = new PrivateKafka(lib, dir, ports, tls, scramUsers, brokerSettings);
    Runtime.getRuntime().addShutdownHook(kafka.reaper);
    try {
      if (proxied) {
        kafka.proxiedPort = ports[ports.length - 1];
        kafka.proxy = FaultProxy.start(HOST, kafka.proxiedPort);
      }
      kafka.writeConfig();
      kafka.format();
      kafka.launch();
    } catch (RuntimeException e) {
      kafka.close();
      throw e;
    }
    return kafka;
  }

  /** The bootstrap address, {@code 127.0.0.1:<port>}. */
  public String bootstrap() {
    return HOST + ":" + port;
  }

  /**
   * The bootstrap address through the proxy (only after {@link #startBehindProxy()}).
   *
   * @throws IllegalStateException when the broker was started without a proxied listener
   */
  public String proxiedBootstrap() {
    return proxy().address();
  }

  /** The fault proxy in front of the proxied listener (only after {@link #startBehindProxy()}). */
  public FaultProxy proxy() {
    if (proxy == null) {
      throw new IllegalStateException(this + " was started without a proxied listener");
    }
    return proxy;
  }

  /** The SSL listener's address, {@code 127.0.0.1:<port>} (only after {@link #startWithTls}). */
  public String sslBootstrap() {
    requireTls();
    return HOST + ":" + sslPort;
  }

  /** The SASL_SSL (SCRAM-SHA-512) listener's address (only after {@link #startWithTls}). */
  public String saslSslBootstrap() {
    requireTls();
    return HOST + ":" + saslSslPort;
  }

  private void requireTls() {
    if (tls == null) {
      throw new IllegalStateException(this + " was started without TLS listeners");
    }
  }

  /** The broker's data directory (holds {@code kafka.log} and the log segments). */
  public Path directory() {
    return dir;
  }

  /** Whether the broker process is alive. */
  public synchronized boolean isRunning() {
    return process != null && process.isAlive();
  }

  /**
   * Stops the broker as an operator would (SIGTERM) and waits until it exited (forcibly after 30
   * s). The data directory stays for {@link #restart()}.
   */
  public synchronized void stop() {
    if (process == null) {
      return;
    }
    process.destroy();
    if (!waitFor(process, STOP_TIMEOUT)) {
      process.destroyForcibly();
      waitFor(process, STOP_TIMEOUT);
    }
    process = null;
  }

  /**
   * Freezes the broker (SIGSTOP): it keeps its connections and ports but answers nothing, like a
   * broker in a long GC pause or a VM stall, until {@link #thaw()}.
   */
  public synchronized void freeze() {
    signal("STOP");
  }

  /** Lets a {@link #freeze() frozen} broker run again (SIGCONT). */
  public synchronized void thaw() {
    signal("CONT");
  }

  private void signal(String name) {
    if (process == null) {
      throw new IllegalStateException(this + " is not running");
    }
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid()))
              .redirectErrorStream(true)
              .start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + name + " of " + this + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run kill -" + name + " for " + this, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while signalling " + this, e);
    }
  }

  /** Kills the broker (SIGKILL) and waits until it is gone: no controlled shutdown, no flush. */
  public synchronized void kill() {
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    waitFor(process, STOP_TIMEOUT);
    process = null;
  }

  /**
   * Starts the stopped (or killed) broker again with the same data directory and ports, and waits
   * until it answers.
   */
  public synchronized void restart() {
    if (closed) {
      throw new IllegalStateException("private Kafka at " + bootstrap() + " is closed");
    }
    if (isRunning()) {
      throw new IllegalStateException("private Kafka at " + bootstrap() + " is still running");
    }
    launch();
  }

  /** Stops the broker and deletes its data directory. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    stop();
    if (proxy != null) {
      proxy.close();
    }
    try {
      Runtime.getRuntime().removeShutdownHook(reaper);
    } catch (IllegalStateException e) {
      // The JVM is shutting down: the hook runs anyway.
    }
    keepLog();
    Directories.deleteRecursively(dir);
  }

  /**
   * Copies the broker's log (every start of it: restarts append) into the build's {@code
   * target/private-kafka-logs/} before the directory goes, so that a test that failed against this
   * broker can be read against what the broker did. Nothing when there is no {@code target}.
   */
  private void keepLog() {
    Path target = Path.of("target");
    if (!Files.isDirectory(target) || !Files.exists(logFile())) {
      return;
    }
    try {
      Path kept = Files.createDirectories(target.resolve("private-kafka-logs"));
      Files.copy(
          logFile(),
          kept.resolve(dir.getFileName() + ".kafka.log"),
          java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      // The log is evidence, not a result: a copy that fails does not fail the test.
    }
  }

  @Override
  public String toString() {
    return "PrivateKafka[" + bootstrap() + ", " + dir + "]";
  }

  private void writeConfig() {
    String properties =
        String.join(
            "\n",
            "process.roles=broker,controller",
            "node.id=1",
            "controller.quorum.bootstrap.servers=" + HOST + ":" + controllerPort,
            "controller.listener.names=CONTROLLER",
            "listeners="
                + listeners()
                + proxiedListener(proxiedPort)
                + ",CONTROLLER://"
                + HOST
                + ":"
                + controllerPort,
            "advertised.listeners="
                + listeners()
                + proxiedListener(proxy == null ? 0 : proxy.port()),
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
                + (tls == null ? "" : ",SSL:SSL,SASL_SSL:SASL_SSL")
                + (proxy == null ? "" : ",PROXIED:PLAINTEXT"),
            tlsSettings(),
            "log.dirs=" + dir.resolve("data"),
            "num.partitions=3",
            "auto.create.topics.enable=true",
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "min.insync.replicas=1",
            "group.initial.rebalance.delay.ms=0",
            // After a kill, the restarted controller refuses the broker's registration until the
            // old session expired (9 s by default): keep that wait short.
            "broker.heartbeat.interval.ms=500",
            "broker.session.timeout.ms=3000",
            overrides(),
            "");
    try {
      Files.writeString(dir.resolve("server.properties"), properties, StandardCharsets.UTF_8);
      Files.writeString(dir.resolve("logback.xml"), LOGBACK, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the private Kafka's config into " + dir, e);
    }
  }

  /** The caller's settings, after the defaults: the last line of a key wins. */
  private String overrides() {
    StringBuilder sb = new StringBuilder();
    brokerSettings.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
    return sb.toString().strip();
  }

  private String listeners() {
    String plain = "PLAINTEXT://" + HOST + ":" + port;
    return tls == null
        ? plain
        : plain + ",SSL://" + HOST + ":" + sslPort + ",SASL_SSL://" + HOST + ":" + saslSslPort;
  }

  private String proxiedListener(int listenerPort) {
    return proxy == null ? "" : ",PROXIED://" + HOST + ":" + listenerPort;
  }

  private String tlsSettings() {
    if (tls == null) {
      return "";
    }
    return String.join(
        "\n",
        "ssl.keystore.type=PKCS12",
        "ssl.keystore.location=" + tls.serverKeyStore(),
        "ssl.keystore.password=" + tls.password(),
        "ssl.key.password=" + tls.password(),
        "sasl.enabled.mechanisms=SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config="
            + "org.apache.kafka.common.security.scram.ScramLoginModule required;");
  }

  private List<String> java(String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Dlogback.configurationFile=" + dir.resolve("logback.xml"));
    command.add("-cp");
    command.add(lib + "/*");
    command.addAll(List.of(args));
    return command;
  }

  private ProcessBuilder builder(List<String> command) {
    return new ProcessBuilder(command)
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()))
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
  }

  /** Formats the storage once, as a standalone controller quorum of this one node. */
  private void format() {
    List<String> command =
        java(
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
            "--standalone");
    scramUsers.forEach(
        (name, password) ->
            command.addAll(
                List.of(
                    "--add-scram", "SCRAM-SHA-512=[name=" + name + ",password=" + password + "]")));
    Process formatter = startProcess(command);
    if (!waitFor(formatter, FORMAT_TIMEOUT)) {
      formatter.destroyForcibly();
      throw failure("formatting its storage did not finish within " + FORMAT_TIMEOUT.toSeconds());
    }
    if (formatter.exitValue() != 0) {
      throw failure("formatting its storage failed with exit code " + formatter.exitValue());
    }
  }

  private synchronized void launch() {
    process =
        startProcess(
            java(
                "-Xms128m",
                "-Xmx384m",
                // Starts in about half the time on a busy two-core machine; a test's traffic does
                // not need the C2 compiler.
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "kafka.Kafka",
                dir.resolve("server.properties").toString()));
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (!LocalPorts.accepts(HOST, port)) {
      checkStarting(deadline);
      pause();
    }
    try (Admin admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap(),
                AdminClientConfig.CLIENT_ID_CONFIG,
                "private-kafka-ready-check"))) {
      while (true) {
        checkStarting(deadline);
        try {
          if (!admin
              .describeCluster(new DescribeClusterOptions().timeoutMs(2_000))
              .nodes()
              .get(3, TimeUnit.SECONDS)
              .isEmpty()) {
            return;
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for " + this, e);
        } catch (Exception e) {
          // Not ready yet (the controller may still be electing itself): ask again.
        }
        pause();
      }
    }
  }

  private void checkStarting(long deadline) {
    if (!process.isAlive()) {
      throw failure("the broker exited with code " + process.exitValue() + " while starting");
    }
    if (System.nanoTime() - deadline > 0) {
      process.destroyForcibly();
      waitFor(process, STOP_TIMEOUT);
      throw failure(
          "the broker did not answer on "
              + bootstrap()
              + " within "
              + START_TIMEOUT.toSeconds()
              + " s");
    }
  }

  private Process startProcess(List<String> command) {
    try {
      return builder(command).start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + command.get(0) + " for " + this, e);
    }
  }

  private Path logFile() {
    return dir.resolve("kafka.log");
  }

  private IllegalStateException failure(String what) {
    return new IllegalStateException(
        "private Kafka at "
            + bootstrap()
            + ": "
            + what
            + "; log "
            + logFile()
            + " ends with:\n"
            + logTail());
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

  private void destroyNow() {
    Process p = process;
    if (p != null) {
      p.destroyForcibly();
    }
  }

  /** {@code <repo>/.run/kafka/lib}, checked to hold the broker. */
  static Path libDir() {
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
    String home = System.getenv(HOME);
    if (home != null && !home.isBlank()) {
      Path root = Path.of(home).toAbsolutePath();
      if (!Files.isRegularFile(root.resolve("scripts/services.sh"))) {
        throw new IllegalStateException(
            HOME + " = " + home + " is not the outbox-relay repository (no scripts/services.sh)");
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
            + HOME);
  }

  private static boolean waitFor(Process p, Duration timeout) {
    try {
      return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !p.isAlive();
    }
  }

  private static void pause() {
    try {
      Thread.sleep(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a private Kafka", e);
    }
  }
}
