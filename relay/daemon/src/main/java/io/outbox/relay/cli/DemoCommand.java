package io.outbox.relay.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigUtil;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.config.RelayConfigLoader;
import io.outbox.relay.config.RelaySettings;
import io.outbox.relay.demo.Demo;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code demo}: the quickstart. Makes sure the local services run, creates a demo database, runs
 * the relay with a sample order service writing and a consumer reading, and prints a summary.
 */
@Command(
    name = "demo",
    description = {
      "The quickstart: services, a demo database, the relay, a sample app and a consumer.",
      "Starts the local services (scripts/services.sh up), creates the database outbox_demo, runs",
      "the relay (polling -> Kafka; or --source cdc, --sink rabbitmq|nats|redis) while a sample order service",
      "writes orders and outbox events in the same transactions and a consumer reads them back;",
      "ends with a summary (a cdc run drops its replication slot at the end).",
      "--exactly-once: sink.kafka.delivery = exactly-once, a read_committed consumer, and the",
      "relay in a process of its own that the demo kills with kill -9 half-way through.",
      "Exit 0 when every committed event arrived (with --exactly-once: once)."
    })
final class DemoCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin HelpOption help;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "The demo configuration (default: config/demo.conf of this checkout).")
  Path configFile;

  @Option(
      names = "--duration",
      paramLabel = "SECONDS",
      defaultValue = "10",
      description = "How long the order service writes (default: ${DEFAULT-VALUE}).")
  int seconds;

  @Option(
      names = "--rate",
      defaultValue = "250",
      description = "Orders per second, two events each (default: ${DEFAULT-VALUE}).")
  int rate;

  @Option(
      names = "--writers",
      defaultValue = "4",
      description = "Concurrent writer threads (default: ${DEFAULT-VALUE}).")
  int writers;

  @Option(
      names = "--sink",
      paramLabel = "TYPE",
      description = "kafka, rabbitmq, nats or redis (default: the sink.type of the configuration).")
  String sink;

  @Option(
      names = "--source",
      paramLabel = "TYPE",
      description = {
        "polling or cdc (default: the source.type of the configuration). cdc streams the outbox",
        "from PostgreSQL's WAL (needs wal_level = logical, which scripts/services.sh sets)."
      })
  String source;

  @Option(
      names = "--exactly-once",
      description = {
        "Publish with sink.kafka.delivery = exactly-once (Kafka; polling or cdc source), read",
        "with isolation.level = read_committed, kill -9 the relay (run as a process of its own)",
        "half-way through and start a new one; fails on any duplicate."
      })
  boolean exactlyOnce;

  @Option(
      names = "--no-services",
      description = "Do not run scripts/services.sh up: the services already run.")
  boolean noServices;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    if (sink != null && !List.of("kafka", "rabbitmq", "nats", "redis").contains(sink)) {
      throw new ParameterException(
          spec.commandLine(), "--sink must be kafka, rabbitmq, nats or redis, not '" + sink + "'");
    }
    if (source != null && !source.equals("polling") && !source.equals("cdc")) {
      throw new ParameterException(
          spec.commandLine(), "--source must be polling or cdc, not '" + source + "'");
    }
    if (seconds < 1 || rate < 1 || writers < 1) {
      throw new ParameterException(
          spec.commandLine(), "--duration, --rate and --writers must be at least 1");
    }
    if (exactlyOnce && sink != null && !sink.equals("kafka")) {
      throw new ParameterException(spec.commandLine(), exactlyOnceRefusal("--sink " + sink));
    }
    Path home = LocalServices.home();
    Path file = configFile != null ? configFile : home.resolve("config/demo.conf");
    String run = UUID.randomUUID().toString().substring(0, 8);
    String topicPrefix = "demo-" + run;
    // A fresh topic per run, so that the consumer sees only this run's events.
    RelayConfigLoader loader = RelayConfigLoader.standard();
    Config user = loader.parse(file);
    StringBuilder overrides = new StringBuilder("outbox-relay.http.port = 0\n");
    if (user.hasPath("outbox-relay.pipelines")) {
      for (String name : user.getObject("outbox-relay.pipelines").keySet()) {
        overrides
            .append("outbox-relay.pipelines.\"")
            .append(name)
            .append("\".routing.destination = \"")
            .append(topicPrefix)
            .append(".${aggregate_type}\"\n");
        if (source != null) {
          overrides
              .append("outbox-relay.pipelines.\"")
              .append(name)
              .append("\".source.type = \"")
              .append(source)
              .append("\"\n");
        }
        if (sink != null) {
          overrides
              .append("outbox-relay.pipelines.\"")
              .append(name)
              .append("\".sink.type = \"")
              .append(sink)
              .append("\"\n");
        }
        if (exactlyOnce) {
          // This run's own ledger topic and transactional ids: the demo database is new.
          String pipeline = "outbox-relay.pipelines.\"" + name + "\".";
          overrides
              .append(pipeline)
              .append("sink.kafka.delivery = exactly-once\n")
              .append(pipeline)
              .append("sink.kafka.ledger.topic = \"")
              .append(topicPrefix)
              .append(".ledger\"\n")
              .append(pipeline)
              .append("sink.kafka.transactional-id-prefix = \"")
              .append(topicPrefix)
              .append("\"\n")
              .append(pipeline)
              .append("on-publish = mark\n");
        }
      }
    }
    user = ConfigFactory.parseString(overrides.toString()).withFallback(user);
    RelaySettings settings = loader.load(user, file.toString()).settings();
    if (settings.pipelines().size() != 1) {
      throw new CommandFailedException(
          file
              + " must define exactly one pipeline for the demo, found "
              + settings.pipelines().size());
    }
    PipelineSettings pipeline = settings.pipelines().values().iterator().next();
    if (exactlyOnce && !pipeline.sinkType().equals("kafka")) {
      throw new CommandFailedException(
          exactlyOnceRefusal(file + "'s sink.type " + pipeline.sinkType()));
    }
    Path relayConfig = null;
    if (exactlyOnce) {
      // The relay process reads the user's file with this run's settings on top.
      Path dir = Files.createTempDirectory("outbox-demo-" + run + "-");
      relayConfig = dir.resolve("demo.conf");
      Files.writeString(
          relayConfig,
          "include file("
              + ConfigUtil.quoteString(file.toAbsolutePath().toString())
              + ")\n"
              + overrides);
    }
    if (!noServices) {
      LocalServices.up(home, out, "demo");
    }
    out.flush();
    System.out.flush();
    return new Demo(System.out)
        .run(
            new Demo.Options(
                settings,
                topicPrefix + ".order",
                Duration.ofSeconds(seconds),
                rate,
                writers,
                relayConfig));
  }

  private static String exactlyOnceRefusal(String sink) {
    return "--exactly-once needs the Kafka sink (Kafka transactions), not "
        + sink
        + "; other sinks deliver at least once";
  }
}
