package io.outbox.testcontainers;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.utility.DockerImageName;

/**
 * The outbox relay's image ({@code outbox-relay}, docs/operations.md) as a Testcontainers
 * container, configured from the test: the relay reads the application's outbox table and publishes
 * its events to the application's broker while the test runs.
 *
 * <p>Usage, beside the application's own PostgreSQL and Kafka containers on a shared network:
 *
 * <pre>{@code
 * Network network = Network.newNetwork();
 * PostgreSQLContainer postgres =
 *     new PostgreSQLContainer("postgres:17").withNetwork(network).withNetworkAliases("postgres");
 * KafkaContainer kafka =
 *     new KafkaContainer("apache/kafka:3.9.1").withNetwork(network).withNetworkAliases("kafka")
 *         .withListener("kafka:19092");
 * OutboxRelayContainer relay =
 *     new OutboxRelayContainer()
 *         .withNetwork(network)
 *         .withDatabase("jdbc:postgresql://postgres:5432/test", "test", "test")
 *         .withKafka("kafka:19092")
 *         .withPipelineSetting("routing.destination", "events.${aggregate_type}")
 *         .withMigrateOnStart()
 *         .dependsOn(postgres, kafka);
 * relay.start(); // returns once /health/ready answers 200: the pipeline is active
 * }</pre>
 *
 * <p>The addresses are the ones the relay sees from its container: network aliases on a shared
 * network. Host networking works too ({@code withNetworkMode("host")}): the relay then reaches
 * {@code localhost} services and listens on the host's port {@code outbox-relay.http.port} (9400
 * unless {@link #withSetting} sets another), which {@link #getMappedPort} returns.
 *
 * <p>Settings become typesafe-config's {@code CONFIG_FORCE_} variables (docs/configuration.md,
 * "Settings from the environment") over a configuration file holding only {@code http.host =
 * "0.0.0.0"}: every other setting is the relay's default unless set here. One pipeline, {@value
 * #DEFAULT_PIPELINE} unless {@link #withPipeline} names another.
 */
public class OutboxRelayContainer extends GenericContainer<OutboxRelayContainer> {

  /** The image's name as {@code scripts/image.sh build} tags it. */
  public static final DockerImageName DEFAULT_IMAGE_NAME = DockerImageName.parse("outbox-relay");

  /** The version of this module: the image it runs by default. */
  public static final String DEFAULT_TAG = version();

  /** The port of {@code /metrics}, {@code /health/live} and {@code /health/ready}. */
  public static final int HTTP_PORT = 9400;

  public static final String DEFAULT_PIPELINE = "orders";

  static final String CONFIG_FILE = "/etc/outbox-relay/relay.conf";

  /** Listening on every interface, for probes from outside the container. */
  private static final String CONFIG = "outbox-relay.http.host = \"0.0.0.0\"\n";

  private final Map<String, String> settings = new LinkedHashMap<>();
  private final Map<String, String> pipelineSettings = new LinkedHashMap<>();
  private String pipeline = DEFAULT_PIPELINE;
  private boolean migrateOnStart;

  /** The image {@code outbox-relay:}{@value #DEFAULT_TAG}. */
  public OutboxRelayContainer() {
    this(DEFAULT_IMAGE_NAME.withTag(DEFAULT_TAG));
  }

  public OutboxRelayContainer(DockerImageName image) {
    super(image);
    image.assertCompatibleWith(DEFAULT_IMAGE_NAME);
    addExposedPort(HTTP_PORT);
    withCopyToContainer(Transferable.of(CONFIG, 0644), CONFIG_FILE);
    waitingFor(
        Wait.forHttp("/health/ready")
            .forPort(HTTP_PORT)
            .forStatusCode(200)
            .withStartupTimeout(Duration.ofMinutes(2)));
  }

  /**
   * The pipeline's name (default {@value #DEFAULT_PIPELINE}): its metrics' {@code pipeline} tag.
   */
  public OutboxRelayContainer withPipeline(String name) {
    pipeline = name;
    return self();
  }

  /** The database holding the outbox table, as the relay's container reaches it. */
  public OutboxRelayContainer withDatabase(String jdbcUrl, String user, String password) {
    return withPipelineSetting("database.url", jdbcUrl)
        .withPipelineSetting("database.user", user)
        .withPipelineSetting("database.password", password);
  }

  /** The Kafka sink (the default sink) with these bootstrap servers. */
  public OutboxRelayContainer withKafka(String bootstrapServers) {
    return withSink("kafka").withPipelineSetting("sink.kafka.bootstrap-servers", bootstrapServers);
  }

  /**
   * The sink type ({@code kafka}, {@code rabbitmq}, {@code nats}, {@code redis}); its settings with
   * {@link #withPipelineSetting}, e.g. {@code ("sink.rabbitmq.uri", "amqp://rabbitmq:5672")}.
   */
  public OutboxRelayContainer withSink(String type) {
    return withPipelineSetting("sink.type", type);
  }

  /** A key of the pipeline, below {@code outbox-relay.pipelines.<name>}: {@code "lanes"}, ... */
  public OutboxRelayContainer withPipelineSetting(String key, String value) {
    pipelineSettings.put(key, value);
    return self();
  }

  /** A key below {@code outbox-relay}: {@code "shutdown-timeout"}, {@code "http.port"}, ... */
  public OutboxRelayContainer withSetting(String key, String value) {
    settings.put(key, value);
    return self();
  }

  /** Runs {@code migrate} (the relay's tables) before {@code run}, in the same container. */
  public OutboxRelayContainer withMigrateOnStart() {
    migrateOnStart = true;
    return self();
  }

  /** {@code http://host:port/metrics}: Prometheus' text format. */
  public String getMetricsUrl() {
    return getHttpUrl() + "/metrics";
  }

  /** {@code http://host:port}, the base of {@code /metrics} and {@code /health/*}. */
  public String getHttpUrl() {
    return "http://" + getHost() + ":" + getMappedPort(HTTP_PORT);
  }

  /** With host networking, the relay's own port: nothing is mapped. */
  @Override
  public Integer getMappedPort(int originalPort) {
    if (hostNetwork() && originalPort == HTTP_PORT) {
      return httpPort();
    }
    return super.getMappedPort(originalPort);
  }

  @Override
  protected void configure() {
    if (hostNetwork()) {
      // Nothing is published on the host's network: Testcontainers would wait for a mapping.
      setExposedPorts(List.of());
    }
    settings.forEach((key, value) -> withEnv(variable("outbox-relay." + key), value));
    String prefix = "outbox-relay.pipelines." + pipeline + ".";
    pipelineSettings.forEach((key, value) -> withEnv(variable(prefix + key), value));
    if (migrateOnStart) {
      withCreateContainerCmdModifier(cmd -> cmd.withEntrypoint("bash"));
      setCommand(
          "-c",
          "outbox-relay migrate --config "
              + CONFIG_FILE
              + " && exec outbox-relay run --config "
              + CONFIG_FILE);
    }
  }

  /**
   * The {@code CONFIG_FORCE_} variable setting {@code path}: {@code _} for {@code .}, {@code __}
   * for {@code -}, {@code ___} for {@code _}. Quoted keys holding dots cannot be written so. The
   * rule of the relay's {@code EnvironmentOverrides.variable}, repeated: this module imports
   * nothing of the relay.
   */
  static String variable(String path) {
    StringBuilder name = new StringBuilder("CONFIG_FORCE_");
    for (char c : path.toCharArray()) {
      switch (c) {
        case '.' -> name.append('_');
        case '-' -> name.append("__");
        case '_' -> name.append("___");
        default -> name.append(c);
      }
    }
    return name.toString();
  }

  private boolean hostNetwork() {
    return "host".equals(getNetworkMode());
  }

  private int httpPort() {
    return Integer.parseInt(settings.getOrDefault("http.port", Integer.toString(HTTP_PORT)));
  }

  private static String version() {
    Properties properties = new Properties();
    try (InputStream in = OutboxRelayContainer.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        throw new IllegalStateException("version.properties is missing from " + jar());
      }
      properties.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read version.properties from " + jar(), e);
    }
    return properties.getProperty("version");
  }

  private static String jar() {
    return String.valueOf(OutboxRelayContainer.class.getProtectionDomain().getCodeSource());
  }
}
