package io.outbox.bench;

import io.outbox.relay.cli.LocalServices;
import io.outbox.relay.spi.SourceProvider;
import io.outbox.schema.PartitionedLayout;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code bench}: the benchmark harness of issue #7. Measures the relay's drain throughput, its
 * latency at a fixed rate and its footprint, beside the raw clients, the database's insert rate and
 * Debezium; prints a table and writes JSON. The daemon's {@code Main} adds it when this module is
 * on the class path.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Benchmarks the relay against the local services, beside the bare clients",
      "and Debezium, on the same records:",
      "  insert    writers commit one event per transaction, no relay running;",
      "  drain     a backlog of --events rows, then the relay (its own JVM) runs",
      "            until the broker acked and the relay settled the last row",
      "            (--cdc-backlog streamed: the relay first, then the backlog);",
      "            CPU s/10k events and peak RSS are read from /proc;",
      "  latency   the relay keeps running while writers commit --rate events/s;",
      "  raw       the bare KafkaProducer / amqp-client / jnats async publish /",
      "            Jedis pipelined XADD, records from memory;",
      "  debezium  embedded engine + outbox EventRouter + KafkaProducer awaiting",
      "            each batch's acks, with defaults and tuned (its own JVM);",
      "  connect   with --engine connect: the drain again through the Kafka Connect",
      "            source connector (connect/) on 1, then 2 distributed workers of",
      "            scripts/services.sh connect, beside the daemon's drain.",
      "  curves    with --curve rate|backlog: latency against --rates, or the drain",
      "            against --backlogs, one run per point, as a table and an SVG plot.",
      "Each run creates its own database, topic, exchange or stream and drops them",
      "after.",
      "A full default run takes about 5-10 minutes on 2 cores.",
      ""
    })
public final class BenchCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(
      names = "--events",
      paramLabel = "N",
      defaultValue = "200000",
      description = "Backlog size of the drains (default: ${DEFAULT-VALUE}).")
  int events;

  @Option(
      names = "--keys",
      paramLabel = "N",
      defaultValue = "1000",
      description = "Distinct aggregate ids (default: ${DEFAULT-VALUE}).")
  int keys;

  @Option(
      names = "--payload-bytes",
      paramLabel = "BYTES",
      defaultValue = "512",
      description = "JSON payload size in bytes (default: ${DEFAULT-VALUE}).")
  int payloadBytes;

  @Option(
      names = "--source",
      paramLabel = "polling|cdc",
      defaultValue = "polling",
      description = "polling or cdc (default: ${DEFAULT-VALUE}).")
  String source;

  @Option(
      names = "--cdc-backlog",
      paramLabel = "table|streamed",
      defaultValue = "table",
      description = {
        "With --source cdc, how the drain's backlog reaches the relay (default: ${DEFAULT-VALUE}).",
        "table: inserted before the relay starts; its activation reads every pending row from the",
        "table (the catch-up), so the drain is that read, not the stream, and no relay / debezium",
        "ratio is reported. streamed: the relay starts on the empty outbox and, once it streams,",
        "the backlog is inserted (the Debezium baseline's rows and transactions): the drain is the",
        "change stream, beside Debezium's; the insertion's time is reported, and a drain that",
        "ended with it is flagged INSERT-BOUND."
      })
  String cdcBacklog;

  @Option(
      names = "--sink",
      paramLabel = "kafka|rabbitmq|nats|redis",
      defaultValue = "kafka",
      description = "kafka, rabbitmq, nats or redis (default: ${DEFAULT-VALUE}).")
  String sink;

  @Option(
      names = "--on-publish",
      paramLabel = "mark|delete|position",
      defaultValue = "mark",
      description = "mark, delete or position (polling only) (default: ${DEFAULT-VALUE}).")
  String onPublish;

  @Option(
      names = "--rate",
      paramLabel = "EVENTS_PER_S",
      defaultValue = "1000",
      description =
          "Events/s of the latency run; 0 skips the latency run (default: ${DEFAULT-VALUE}).")
  int rate;

  @Option(
      names = "--duration",
      paramLabel = "SECONDS",
      defaultValue = "30",
      description =
          "Length of the latency run and of the insert baseline (default: ${DEFAULT-VALUE}).")
  int duration;

  @Option(
      names = "--warm-up",
      paramLabel = "SECONDS",
      defaultValue = "2",
      description =
          "Unmeasured writing at --rate before the latency run, its CPU, stage histograms and"
              + " idle share (default: ${DEFAULT-VALUE}). A relay JVM that drained only a small"
              + " backlog is still compiling for a minute or two: 120 measures its steady"
              + " state; 0 with a small backlog (--events 1000) measures the first seconds after"
              + " it became active, and the report says how long after its log's active line"
              + " the run began.")
  int warmUp;

  @Option(
      names = "--writers",
      paramLabel = "N",
      defaultValue = "16",
      description = {
        "Concurrent writer transactions of the insert baseline and the latency run, one",
        "connection each (default: ${DEFAULT-VALUE}: with one event per transaction each",
        "writer waits for its commit's WAL flush, so a few writers cannot reach 1,000/s)."
      })
  int writers;

  @Option(
      names = "--baselines",
      paramLabel = "LIST",
      split = ",",
      defaultValue = "raw,insert,debezium",
      description =
          "Baselines to run, comma-separated, from raw, insert, debezium, or none"
              + " (default: ${DEFAULT-VALUE}). debezium needs --sink kafka.")
  List<String> baselines;

  @Option(
      names = "--delivery",
      paramLabel = "MODE",
      description = {
        "at-least-once, exactly-once or both: the relay's sink.kafka.delivery (--sink kafka);",
        "both drains and measures latency with at-least-once, then with exactly-once, in the",
        "same run, and reports the drain ratio (issue #14: >= 0.7). Figures are then named",
        "after the mode. Default: the relay's default (at-least-once), figures unnamed."
      })
  String delivery;

  @Option(
      names = "--engine",
      paramLabel = "daemon|connect",
      defaultValue = "daemon",
      description = {
        "daemon: the relay's own process only (default). connect: also drains the backlog",
        "through the Kafka Connect connector on 1, then 2 workers (--source polling, --sink",
        "kafka; stops and starts the workers of scripts/services.sh connect; needs the plug-in:",
        "mvn -B -q package -DskipTests -pl connect -am)."
      })
  String engine;

  @Option(
      names = "--lanes",
      paramLabel = "N",
      description = "The relay's lanes (default: the relay's default, 2).")
  Integer lanes;

  @Option(
      names = "--batch-size",
      paramLabel = "N",
      description = "The relay's batch-size (default: the relay's default, 500).")
  Integer batchSize;

  @Option(
      names = "--partitions",
      paramLabel = "N",
      defaultValue = "6",
      description = "Partitions of the run's Kafka topic (default: ${DEFAULT-VALUE}).")
  int partitions;

  @Option(
      names = "--layout",
      paramLabel = "plain|partitioned",
      defaultValue = "plain",
      description = "The outbox's layout (the relay's layout setting; default: ${DEFAULT-VALUE}).")
  String layout;

  @Option(
      names = "--layout-partitions",
      paramLabel = "N",
      defaultValue = "4",
      description = "With --layout partitioned: partitions.count (default: ${DEFAULT-VALUE}).")
  int layoutPartitions;

  @Option(
      names = "--layout-size",
      paramLabel = "IDS",
      defaultValue = "1000000",
      description = "With --layout partitioned: partitions.size (default: ${DEFAULT-VALUE}).")
  long layoutSize;

  @Option(
      names = "--weigh-after",
      paramLabel = "SECONDS",
      defaultValue = "0",
      description =
          "Weigh the outbox again this long after the drain, once retention had its turn (see"
              + " --relay-config retention.*; default: ${DEFAULT-VALUE}, not again).")
  int weighAfter;

  @Mixin CurveOptions curve = new CurveOptions();

  @Option(
      names = "--latency-dump",
      paramLabel = "FILE",
      description =
          "Also write every event of the latency run to FILE, one line each in commit order: the"
              + " commit's wall-clock time and its commit-to-receive and commit-to-ack times, in"
              + " microseconds (-1: not received, or no published_at). With --delivery both, one"
              + " file per mode (the mode added to the name).")
  Path latencyDump;

  @Option(
      names = "--json",
      paramLabel = "FILE",
      description = "Also write every figure and setting as JSON to FILE.")
  Path json;

  @Option(
      names = "--work-dir",
      paramLabel = "DIR",
      description =
          "Where the run's generated config and the processes' logs go"
              + " (default: a new directory under java.io.tmpdir).")
  Path workDir;

  @Mixin RelayOptions relay = new RelayOptions();

  @Option(
      names = "--timeout",
      paramLabel = "SECONDS",
      defaultValue = "600",
      description = "Longest a drain may take before the run fails (default: ${DEFAULT-VALUE}).")
  int timeout;

  @Mixin ServiceOptions services = new ServiceOptions();

  @Override
  public Integer call() throws Exception {
    validate();
    PrintWriter out = spec.commandLine().getOut();
    services.up(out);
    String run = UUID.randomUUID().toString().substring(0, 8);
    Path dir = workDir != null ? workDir : Files.createTempDirectory("outbox-bench-" + run + "-");
    Files.createDirectories(dir);
    BenchRun.Plan plan =
        new BenchRun.Plan(
            run,
            dir,
            new Workload(events, keys, payloadBytes),
            relay.setup(source, sink, onPublish, lanes, batchSize),
            services.brokers(run, partitions, relay.lingerMs),
            curve.kind == null ? baselines : curve.baselines(baselines, sink),
            rate,
            Duration.ofSeconds(duration),
            Duration.ofSeconds(warmUp),
            writers,
            Duration.ofSeconds(timeout),
            deliveries(),
            engine,
            LocalServices.home(),
            cdcBacklog,
            services.pgUrl,
            services.pgUser,
            services.pgPassword(),
            arguments(),
            latencyDump,
            layout.equals("partitioned")
                ? new PartitionedLayout(layoutPartitions, layoutSize)
                : null,
            Duration.ofSeconds(weighAfter));
    out.printf("bench: run %s, logs and config in %s%n", run, dir);
    out.flush();
    if (curve.kind != null) {
      return curve.run(plan, dir, json, out);
    }
    Report report;
    try {
      report = new BenchRun(plan, out).run();
    } catch (IllegalStateException e) {
      // An expected failure (a process died, a drain timed out): its message says what and where.
      spec.commandLine().getErr().println("bench: " + e.getMessage());
      return 1;
    }
    report.print(out);
    if (json != null) {
      report.writeJson(json);
      out.println("bench: wrote " + json);
    }
    return 0;
  }

  /** This command's own arguments, for the report (the parse result also holds the parents'). */
  private String arguments() {
    List<String> all = spec.commandLine().getParseResult().originalArgs();
    return String.join(" ", all.subList(all.indexOf(spec.name()) + 1, all.size()));
  }

  /** The delivery modes to run, in order; empty: one run with the relay's default. */
  private List<String> deliveries() {
    if (delivery == null) {
      return List.of();
    }
    return delivery.equals("both") ? List.of("at-least-once", "exactly-once") : List.of(delivery);
  }

  private void validate() {
    check(List.of("polling", "cdc").contains(source), "--source must be polling or cdc");
    check(
        List.of("table", "streamed").contains(cdcBacklog),
        "--cdc-backlog must be table or streamed, not '" + cdcBacklog + "'");
    check(
        source.equals("cdc")
            || !spec.commandLine().getParseResult().hasMatchedOption("--cdc-backlog"),
        "--cdc-backlog needs --source cdc (the polling source claims its backlog from the table)");
    check(
        List.of("kafka", "rabbitmq", "nats", "redis").contains(sink),
        "--sink must be kafka, rabbitmq, nats or redis");
    check(
        List.of("mark", "delete", "position").contains(onPublish),
        "--on-publish must be mark, delete or position");
    check(
        !onPublish.equals("position") || source.equals("polling"),
        "--on-publish position needs --source polling (the cdc source settles each row)");
    check(
        List.of("plain", "partitioned").contains(layout), "--layout must be plain or partitioned");
    check(
        layoutPartitions >= PartitionedLayout.MIN_COUNT
            && layoutPartitions <= PartitionedLayout.MAX_COUNT
            && layoutSize >= PartitionedLayout.MIN_SIZE
            && layoutSize <= PartitionedLayout.MAX_SIZE,
        "--layout-partitions must be 2..64 and --layout-size 1000..1000000000");
    check(weighAfter >= 0, "--weigh-after >= 0");
    check(events >= 1 && keys >= 1 && writers >= 1, "--events, --keys, --writers must be >= 1");
    check(
        payloadBytes >= Workload.MIN_PAYLOAD_BYTES,
        "--payload-bytes must be >= " + Workload.MIN_PAYLOAD_BYTES);
    check(rate >= 0 && duration >= 1 && timeout >= 1, "--rate >= 0, --duration, --timeout >= 1");
    check(warmUp >= 0, "--warm-up >= 0");
    check(partitions >= 1, "--partitions must be >= 1");
    if (delivery != null) {
      check(
          List.of("at-least-once", "exactly-once", "both").contains(delivery),
          "--delivery must be at-least-once, exactly-once or both, not '" + delivery + "'");
      check(sink.equals("kafka"), "--delivery needs --sink kafka (the Kafka sink's delivery)");
    }
    check(List.of("daemon", "connect").contains(engine), "--engine must be daemon or connect");
    if (engine.equals("connect")) {
      check(
          source.equals("polling") && sink.equals("kafka"),
          "--engine connect needs --source polling and --sink kafka (the connector's path)");
      Path plugin = ConnectCluster.pluginPath(LocalServices.home());
      check(
          Files.isDirectory(plugin),
          "--engine connect: no Connect plug-in at "
              + plugin
              + "; build it: mvn -B -q package -DskipTests -pl connect -am");
    }
    curve.check(engine, delivery, baselines);
    if (latencyDump != null) {
      check(
          curve.kind == null && rate > 0,
          "--latency-dump needs a latency run (--rate > 0, no --curve)");
    }
    for (String b : baselines) {
      check(
          List.of("raw", "insert", "debezium", "none").contains(b),
          "--baselines takes raw, insert, debezium or none, not '" + b + "'");
    }
    if (source.equals("cdc")
        && ServiceLoader.load(SourceProvider.class).stream()
            .noneMatch(p -> p.get().type().equals("cdc"))) {
      throw new ParameterException(
          spec.commandLine(),
          "--source cdc: the CDC source is not built into this checkout yet (no 'cdc' source"
              + " plug-in on the class path); use --source polling");
    }
  }

  private void check(boolean ok, String message) {
    check(spec, ok, message);
  }

  /** Refuses the command line of {@code command} with {@code message} unless {@code ok}. */
  static void check(CommandSpec command, boolean ok, String message) {
    if (!ok) {
      throw new ParameterException(command.commandLine(), message);
    }
  }
}
