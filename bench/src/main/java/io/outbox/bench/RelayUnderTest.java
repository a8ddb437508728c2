package io.outbox.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The relay as users run it: a separate JVM ({@code io.outbox.relay.cli.Main run}) with the
 * daemon's class path and a configuration generated for the run, so that its CPU time and peak RSS
 * are its own.
 */
final class RelayUnderTest {
  static final String PIPELINE = "bench";

  /**
   * The relay's {@code lanes} default (relay/core reference.conf), which the raw baselines match
   * when {@code --lanes} is not given: one channel or connection per lane.
   */
  static final int RELAY_DEFAULT_LANES = 2;

  private RelayUnderTest() {}

  /**
   * What the relay of a run is told.
   *
   * @param delivery {@code sink.kafka.delivery} ({@code at-least-once} or {@code exactly-once}), or
   *     null for the relay's default
   */
  record Setup(
      String source,
      String sink,
      String onPublish,
      Integer lanes,
      Integer batchSize,
      String classpath,
      List<String> jvmOptions,
      String extraConfig,
      String delivery) {

    /** The lanes the relay runs: {@code --lanes}, else the relay's default. */
    int lanesInEffect() {
      return lanes != null ? lanes : RELAY_DEFAULT_LANES;
    }

    /** The same relay with {@code sink.kafka.delivery = delivery}. */
    Setup withDelivery(String delivery) {
      return new Setup(
          source, sink, onPublish, lanes, batchSize, classpath, jvmOptions, extraConfig, delivery);
    }
  }

  /** Writes the configuration of the run to {@code dir/relay.conf}. */
  static Path writeConfig(Path dir, Setup setup, BenchDatabase db, Brokers brokers)
      throws IOException {
    StringBuilder conf = new StringBuilder();
    conf.append("outbox-relay {\n");
    conf.append("  http { host = \"127.0.0.1\", port = 0 }\n");
    conf.append("  pipelines.").append(PIPELINE).append(" {\n");
    conf.append("    database {\n");
    conf.append("      url = ").append(quote(db.url())).append('\n');
    conf.append("      user = ").append(quote(db.user())).append('\n');
    if (!db.password().isEmpty()) {
      conf.append("      password = ${?OUTBOX_BENCH_DB_PASSWORD}\n");
    }
    conf.append("    }\n");
    conf.append("    table = ").append(quote(BenchDatabase.TABLE)).append('\n');
    conf.append("    source.type = ").append(setup.source()).append('\n');
    if (setup.source().equals("cdc")) {
      // The harness created the slot before the backlog, so that the backlog is in the WAL.
      conf.append("    source.cdc.slot-name = ").append(quote(slot(db))).append('\n');
      conf.append("    source.cdc.publication-name = ")
          .append(quote(BenchDatabase.RELAY_PUBLICATION))
          .append('\n');
      conf.append("    source.cdc.create-slot = false\n");
      conf.append("    source.cdc.create-publication = false\n");
    }
    conf.append("    sink.type = ").append(setup.sink()).append('\n');
    conf.append("    sink.kafka.bootstrap-servers = ")
        .append(quote(brokers.kafkaBootstrap()))
        .append('\n');
    conf.append("    sink.rabbitmq.uri = ").append(quote(brokers.rabbitUri())).append('\n');
    if (setup.sink().equals("nats")) {
      // The harness made the run's stream (StreamBrokers.createStream).
      conf.append("    sink.nats.url = ").append(quote(brokers.natsUrl())).append('\n');
    }
    if (setup.sink().equals("redis")) {
      // Bounded as the other sinks' destinations are: the raw baseline trims the same way.
      conf.append("    sink.redis.uri = ").append(quote(brokers.redisUri())).append('\n');
      conf.append("    sink.redis.max-len = ").append(Brokers.QUEUE_MAX_LENGTH).append('\n');
    }
    // Written as a HOCON string so that ${aggregate_type} stays a template for the relay.
    // Quoted, so that HOCON leaves ${aggregate_type} to the relay's template.
    conf.append("    routing.destination = ")
        .append(quote(brokers.prefix() + "${aggregate_type}"))
        .append('\n');
    conf.append("    on-publish = ").append(setup.onPublish()).append('\n');
    if (db.layout() != null) {
      // As a user who converted the table says it (docs/maintenance.md): the relay plans its
      // claims for the layout it is told.
      conf.append("    layout = partitioned\n");
      conf.append("    partitions { count = ")
          .append(db.layout().count())
          .append(", size = ")
          .append(db.layout().size())
          .append(" }\n");
    }
    if (setup.lanes() != null) {
      conf.append("    lanes = ").append(setup.lanes()).append('\n');
    }
    if (setup.batchSize() != null) {
      conf.append("    batch-size = ").append(setup.batchSize()).append('\n');
    }
    if (setup.delivery() != null) {
      conf.append("    sink.kafka.delivery = ").append(setup.delivery()).append('\n');
      if (setup.delivery().equals("exactly-once")) {
        // The run's own ledger topic (deleted with the run's topic) and transactional ids.
        conf.append("    sink.kafka.ledger.topic = ")
            .append(quote(brokers.ledgerTopic()))
            .append('\n');
        conf.append("    sink.kafka.transactional-id-prefix = ")
            .append(quote(brokers.prefix() + "tx"))
            .append('\n');
      }
    }
    if (!setup.extraConfig().isBlank()) {
      conf.append("    ").append(setup.extraConfig().strip()).append('\n');
    }
    conf.append("  }\n}\n");
    Path file = dir.resolve("relay.conf");
    Files.writeString(file, conf);
    return file;
  }

  /**
   * The JVM options the distribution's launcher runs the relay with by default (before {@code
   * JAVA_OPTS}), besides {@link #DEFAULT_GC}, so that the bench measures what a user runs; {@code
   * --relay-jvm-options} come after them, as {@code JAVA_OPTS} does.
   */
  static final List<String> JVM_DEFAULTS = List.of("-XX:TieredStopAtLevel=1");

  /** The launcher's default collector, left out when an option names one (java refuses two). */
  static final String DEFAULT_GC = "-XX:+UseSerialGC";

  /** The variables java reads options from itself; the relay's JVM inherits them. */
  static final List<String> JAVA_VARIABLES =
      List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS");

  private static final Pattern COLLECTOR = Pattern.compile("-XX:\\+Use\\w*GC");

  /** The relay's JVM options in this process's environment ({@link #jvmOptions(List, Map)}). */
  static List<String> jvmOptions(List<String> given) {
    return jvmOptions(given, System.getenv());
  }

  /**
   * The relay's JVM options: {@link #JVM_DEFAULTS}, {@link #DEFAULT_GC} unless {@code given} or one
   * of {@link #JAVA_VARIABLES} in {@code environment} names a collector, then {@code given}.
   */
  static List<String> jvmOptions(List<String> given, Map<String, String> environment) {
    List<String> named = new ArrayList<>(given);
    for (String variable : JAVA_VARIABLES) {
      String value = environment.getOrDefault(variable, "").strip();
      if (!value.isEmpty()) {
        named.addAll(List.of(value.split("\\s+")));
      }
    }
    List<String> jvm = new ArrayList<>(JVM_DEFAULTS);
    if (named.stream().noneMatch(o -> COLLECTOR.matcher(o).matches())) {
      jvm.add(DEFAULT_GC);
    }
    jvm.addAll(given);
    return jvm;
  }

  /** Starts {@code outbox-relay run --config config}; its output goes to {@code dir/relay.log}. */
  static ChildJvm start(Path dir, Setup setup, Path config, BenchDatabase db) throws IOException {
    return ChildJvm.start(
        "relay",
        setup.classpath(),
        jvmOptions(setup.jvmOptions()),
        "io.outbox.relay.cli.Main",
        List.of("run", "--config", config.toString()),
        dir.resolve("relay.log"),
        Map.of("OUTBOX_BENCH_DB_PASSWORD", db.password()),
        line -> {});
  }

  /** The replication slot of a CDC relay run (slot names are server-wide: the database's name). */
  static String slot(BenchDatabase db) {
    return db.name() + "_relay";
  }

  private static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
