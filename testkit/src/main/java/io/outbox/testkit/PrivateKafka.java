package io.outbox.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;

/**
 * A single-node KRaft Kafka (broker and controller in one process) of a test's own, run as a child
 * JVM on free ports with its own data directory, so that a test can stop, kill and restart it
 * without touching the shared broker of {@link Services#kafkaBootstrap()}.
 *
 * <p>It runs the broker jars that {@code scripts/services.sh up} copied into {@code .run/kafka/lib}
 * at the repository root (found from {@code OUTBOX_RELAY_HOME}, or by walking up from the working
 * directory to the directory holding {@code scripts/services.sh}). The broker's output goes to
 * {@code kafka.log} in its directory; a failed start names the log and shows its tail. The JVMs'
 * command lines and that log are {@link BrokerJvm}'s, the node's configuration {@link
 * KafkaNodeConfig}'s.
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

  static final String HOST = "127.0.0.1";
  // Generous: on a 2-core machine under a full build a broker start has taken more than 60 s.
  private static final Duration START_TIMEOUT = Duration.ofSeconds(180);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  private final ServerHome home;
  private final Path dir;
  private final int port;
  private final TestCertificates tls; // null: PLAINTEXT only
  private final int sslPort;
  private final int saslSslPort;
  private final BrokerJvm jvm;
  private FaultProxy proxy; // null: no proxied listener
  private volatile Process process;

  private PrivateKafka(Path lib, ServerHome home, int[] ports, TestCertificates tls) {
    this.home = home;
    this.dir = home.dir();
    this.port = ports[0];
    this.tls = tls;
    this.sslPort = tls == null ? 0 : ports[2];
    this.saslSslPort = tls == null ? 0 : ports[3];
    this.jvm = new BrokerJvm(lib, dir, bootstrap(), toString());
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
    Path lib = BrokerJvm.jars();
    ServerHome home = ServerHome.create("kafka");
    Path dir = home.dir();
    int[] ports = LocalPorts.free(HOST, (tls == null ? 2 : 4) + (proxied ? 1 : 0));
    PrivateKafka kafka = new PrivateKafka(lib, home, ports, tls);
    home.reapWith(kafka::destroyNow);
    try {
      int proxiedPort = proxied ? ports[ports.length - 1] : 0;
      if (proxied) {
        kafka.proxy = FaultProxy.start(HOST, proxiedPort);
      }
      new KafkaNodeConfig(
              dir,
              kafka.port,
              ports[1],
              tls,
              kafka.sslPort,
              kafka.saslSslPort,
              proxiedPort,
              proxied ? kafka.proxy.port() : 0,
              brokerSettings)
          .write();
      kafka.jvm.format(Map.copyOf(scramUsers));
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
    if (!ProcessWait.exited(process, STOP_TIMEOUT)) {
      process.destroyForcibly();
      ProcessWait.exited(process, STOP_TIMEOUT);
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
    ProcessWait.exited(process, STOP_TIMEOUT);
    process = null;
  }

  /**
   * Starts the stopped (or killed) broker again with the same data directory and ports, and waits
   * until it answers.
   */
  public synchronized void restart() {
    if (home.closed()) {
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
    home.close(
        () -> {
          stop();
          if (proxy != null) {
            proxy.close();
          }
          jvm.keepLog();
        });
  }

  @Override
  public String toString() {
    return "PrivateKafka[" + bootstrap() + ", " + dir + "]";
  }

  private synchronized void launch() {
    Process starting = jvm.startBroker();
    process = starting;
    ProcessWait start =
        new ProcessWait(
            starting,
            START_TIMEOUT,
            Duration.ofMillis(100),
            this,
            what -> {
              starting.destroyForcibly();
              ProcessWait.exited(starting, STOP_TIMEOUT);
              return jvm.failure("the broker " + what);
            });
    start.until(() -> LocalPorts.accepts(HOST, port));
    try (Admin admin =
        Admin.create(
            Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap(),
                AdminClientConfig.CLIENT_ID_CONFIG,
                "private-kafka-ready-check"))) {
      start.until(() -> answers(admin));
    }
  }

  /** Whether the broker names its node in a describe-cluster answer. */
  private boolean answers(Admin admin) {
    try {
      return !admin
          .describeCluster(new DescribeClusterOptions().timeoutMs(2_000))
          .nodes()
          .get(3, TimeUnit.SECONDS)
          .isEmpty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for " + this, e);
    } catch (Exception e) {
      return false; // not ready yet (the controller may still be electing itself): ask again
    }
  }

  private void destroyNow() {
    Process p = process;
    if (p != null) {
      p.destroyForcibly();
    }
  }
}
