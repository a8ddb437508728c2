package io.outbox.bench;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** One bench run: the steps of {@link BenchCommand} in order, collecting a {@link Report}. */
final class BenchRun {

  /**
   * Everything a run is told.
   *
   * @param deliveries the relay's {@code sink.kafka.delivery} modes, drained and measured one after
   *     the other; empty: once, with the relay's default and figures not named after a mode
   * @param engine {@code daemon}, or {@code connect}: the connector's drains too
   * @param home the checkout whose {@code scripts/services.sh connect} runs the Connect workers
   * @param cdcBacklog with the CDC source: {@code table}, the backlog inserted before the relay
   *     starts (its activation reads it from the table), or {@code streamed}, inserted once the
   *     relay streams ({@link StreamedDrain})
   * @param latencyDump where the latency run writes every measured event's timings, or {@code null}
   */
  record Plan(
      String run,
      Path dir,
      Workload workload,
      RelayUnderTest.Setup relay,
      Brokers brokers,
      List<String> baselines,
      int rate,
      Duration duration,
      Duration warmUp,
      int writers,
      Duration timeout,
      List<String> deliveries,
      String engine,
      Path home,
      String cdcBacklog,
      String pgUrl,
      String pgUser,
      String pgPassword,
      String arguments,
      Path latencyDump) {}

  private final Plan plan;
  private final PrintWriter out;
  private final Report report = new Report();

  BenchRun(Plan plan, PrintWriter out) {
    this.plan = plan;
    this.out = out;
  }

  Report run() throws Exception {
    long started = System.nanoTime();
    settings();
    String sink = plan.relay().sink();
    boolean kafka = sink.equals("kafka");
    plan.brokers().declare(sink);
    try (BenchDatabase db =
        BenchDatabase.create(
            plan.pgUrl(), plan.pgUser(), plan.pgPassword(), "bench_" + plan.run())) {
      try (Connection c = db.connect()) {
        DatabaseMetaData meta = c.getMetaData();
        report.settings.put("postgresql", meta.getDatabaseProductVersion());
      }
      if (plan.baselines().contains("insert")) {
        db.notifyTrigger(false);
        insert(db, "insert (no trigger)", "the migration's insert trigger disabled");
        db.notifyTrigger(true);
        insert(db, "insert (no relay)", "the trigger notifying on every commit (nobody is busy)");
      }
      if (plan.deliveries().isEmpty()) {
        relay(db, plan.relay(), plan.dir(), null, true);
      } else {
        for (String delivery : plan.deliveries()) {
          // Each mode's relay has its own config and log; the insert baseline runs beside the
          // first.
          relay(
              db,
              plan.relay().withDelivery(delivery),
              plan.dir().resolve(delivery),
              delivery,
              delivery.equals(plan.deliveries().get(0)));
        }
      }
      if (plan.engine().equals("connect")) {
        connect(db);
      }
      if (plan.baselines().contains("raw")) {
        step("raw %s baseline: %d records", sink, plan.workload().events());
        report.throughput.add(raw(sink));
        if (kafka && plan.rate() > 0) {
          step("raw kafka latency: %d records/s for %ds", plan.rate(), plan.duration().toSeconds());
          report.latency.add(
              RawKafka.latency(
                  plan.brokers(), plan.workload(), plan.rate(), plan.duration(), report.settings));
        }
      }
      if (plan.baselines().contains("debezium")) {
        if (kafka) {
          for (boolean tuned : new boolean[] {false, true}) {
            step(
                "debezium baseline (%s): %d events",
                tuned ? "tuned" : "defaults", plan.workload().events());
            try {
              report.throughput.add(
                  DebeziumDrain.run(
                      tuned,
                      plan.dir(),
                      // This JVM's class path: the bench module's, with Debezium.
                      System.getProperty("java.class.path"),
                      plan.relay().jvmOptions(),
                      db,
                      plan.brokers(),
                      plan.workload(),
                      plan.timeout()));
            } catch (IllegalStateException e) {
              // The relay's figures stand without the baseline: report them, and why it is missing.
              report.notes.add(
                  "debezium " + (tuned ? "tuned" : "default") + " failed: " + e.getMessage());
              out.println("bench: " + report.notes.get(report.notes.size() - 1));
            }
          }
        } else {
          report.notes.add("debezium baseline skipped: it publishes to Kafka (--sink kafka)");
        }
      }
    } finally {
      plan.brokers().remove(sink);
    }
    Targets.evaluate(report, plan.relay(), streamedCdc());
    report.settings.put("load average at end", loadAverage());
    report.settings.put("run seconds", Math.round((System.nanoTime() - started) / 1e9));
    return report;
  }

  /** The bare client of {@code sink} publishing the workload, with the relay's window sizes. */
  private Results.Throughput raw(String sink) throws Exception {
    return switch (sink) {
      case "kafka" -> RawKafka.run(plan.brokers(), plan.workload());
      // One confirm channel per lane of the relay (its default is 2 lanes, not 4: a run without
      // --lanes gave the raw client twice the relay's channels).
      case "rabbitmq" ->
          RawRabbit.run(plan.brokers(), plan.workload(), plan.relay().lanesInEffect(), 1000);
      // sink.nats.max-pending's default: the window of all lanes together.
      case "nats" -> RawNats.run(plan.brokers(), plan.workload(), 1000);
      // One connection per lane, one pipeline per batch, as the relay's sink sends them.
      case "redis" ->
          RawRedis.run(
              plan.brokers(),
              plan.workload(),
              plan.relay().lanesInEffect(),
              plan.relay().batchSize() != null ? plan.relay().batchSize() : 500);
      default -> throw new IllegalArgumentException("unknown sink " + sink);
    };
  }

  /**
   * The connector's drains, on one worker then on two, each of the same backlog as the daemon's.
   * The workers are the checkout's {@code services.sh connect} ones, started fresh and stopped
   * after.
   */
  private void connect(BenchDatabase db) throws Exception {
    // The daemon's figure to compare with: its exactly-once drain when the run has one (the
    // connector runs a Kafka transaction per batch too), else its only one.
    Results.Throughput daemon =
        report.throughput.stream()
            .filter(t -> t.name().startsWith("relay "))
            .reduce(null, (a, t) -> a == null || t.name().endsWith(" exactly-once") ? t : a);
    Results.Throughput one = null;
    for (int workers = 1; workers <= ConnectCluster.PORTS.size(); workers++) {
      String name = ConnectDrain.name(plan.relay(), workers);
      step("%s: starting the workers, loading %d events, draining", name, plan.workload().events());
      ConnectDrain.Outcome o =
          ConnectDrain.run(
              plan.home(),
              workers,
              plan.dir(),
              plan.relay(),
              db,
              plan.brokers(),
              plan.workload(),
              plan.timeout());
      report.throughput.add(o.throughput());
      report.settings.put(name + " tasks", o.placement());
      if (!o.others().isEmpty()) {
        report.notes.add(
            name
                + ": the workers also ran the connector(s) "
                + o.others()
                + " (left by earlier runs or tests; delete them through the REST API)");
      }
      if (daemon != null) {
        report.ratio(name + " / " + daemon.name(), o.throughput(), daemon);
      }
      if (one == null) {
        one = o.throughput();
      } else {
        report.ratio(name + " / 1 worker", o.throughput(), one);
      }
    }
    report.settings.put(
        "connector",
        "transaction.boundary=connector (a Kafka transaction per claimed batch), workers with"
            + " exactly.once.source.support=enabled, tasks = lanes");
    if (!plan.relay().extraConfig().isBlank()) {
      report.notes.add("--relay-config applies to the daemon only, not to the connector");
    }
  }

  /** One insert baseline: {@code --writers} committing one event per transaction, flat out. */
  private Results.Throughput insert(BenchDatabase db, String name, String how) throws Exception {
    step("%s: %d writers for %ds", name, plan.writers(), plan.duration().toSeconds());
    Writers.Outcome o = Writers.run(db, plan.workload(), plan.writers(), 0, plan.duration());
    Results.Throughput t =
        Results.Throughput.of(
            name,
            plan.writers()
                + " writers, one event per transaction (OutboxWriter.write + commit), as fast as"
                + " they can, "
                + how,
            o.commits().size(),
            o.nanos());
    report.throughput.add(t);
    if (!name.equals("insert (relay running)")) {
      db.truncate();
    }
    return t;
  }

  /**
   * The insert baseline again, with the relay running and draining what the writers commit: what
   * the relay costs the application (issue #15: the insert trigger's NOTIFY used to serialize its
   * commits). Waits until the relay has settled it all, so that the latency run starts empty.
   */
  private void insertWithRelay(BenchDatabase db, ChildJvm relay) throws Exception {
    Results.Throughput with =
        insert(db, "insert (relay running)", "while the relay drains what they commit");
    report.throughput.stream()
        .filter(t -> t.name().equals("insert (no trigger)"))
        .findFirst()
        .ifPresent(
            without ->
                report.notes.add(
                    String.format(
                        java.util.Locale.ROOT,
                        "insert with the relay running / without the trigger: %.2f (issue #15:"
                            + " >= 0.9)",
                        with.eventsPerSecond() / without.eventsPerSecond())));
    long deadline = System.nanoTime() + plan.timeout().toNanos();
    try (Connection c = db.connect()) {
      while (db.pending(c) > 0) {
        relay.checkAlive();
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the relay did not settle the insert run's events within " + plan.timeout());
        }
        Thread.sleep(100);
      }
    }
  }

  /**
   * Backlog, drain, then (relay still running) the latency run. {@code delivery} names the figures
   * of one delivery mode (null: unnamed); {@code dir} holds this relay's config and log.
   */
  private void relay(
      BenchDatabase db, RelayUnderTest.Setup setup, Path dir, String delivery, boolean withInsert)
      throws Exception {
    Files.createDirectories(dir);
    String suffix = delivery == null ? "" : " " + delivery;
    boolean cdc = setup.source().equals("cdc");
    if (cdc) {
      db.createSlot(RelayUnderTest.slot(db), true);
    }
    String name =
        "relay " + setup.source() + "->" + setup.sink() + " " + setup.onPublish() + suffix;
    RelayDrain.Outcome drain;
    if (streamedCdc()) {
      step(
          "%s: starting on the empty outbox, then inserting a backlog of %d events while it"
              + " streams",
          name, plan.workload().events());
      drain =
          StreamedDrain.run(name, dir, setup, db, plan.brokers(), plan.workload(), plan.timeout());
      streamed(name, drain.streamed());
    } else {
      step("loading a backlog of %d events", plan.workload().events());
      long t0 = System.nanoTime();
      db.loadBacklog(plan.workload());
      report.settings.put(
          "backlog load events/s",
          Math.round(plan.workload().events() / ((System.nanoTime() - t0) / 1e9)));
      step("%s: draining", name);
      drain =
          RelayDrain.run(
              name, dir, setup, db, plan.brokers(), plan.workload().events(), plan.timeout());
    }
    report.throughput.add(drain.throughput());
    try (ChildJvm relay = drain.relay()) {
      if (cdc && plan.rate() > 0) {
        streamCatchUp(db, relay, name);
      }
      if (withInsert && plan.baselines().contains("insert")) {
        insertWithRelay(db, relay);
      }
      if (plan.rate() > 0) {
        step(
            "latency: %d events/s for %ds after %ds unmeasured",
            plan.rate(), plan.duration().toSeconds(), plan.warmUp().toSeconds());
        StageMetrics stages = StageMetrics.fromLog(dir.resolve("relay.log"));
        // Taken once the warm-up ended: the stages, CPU and idle share of the measured part.
        Measuring m = new Measuring(stages, relay);
        LatencyRun.Outcome latency =
            LatencyRun.run(
                db,
                plan.workload(),
                plan.brokers(),
                setup.sink(),
                setup.onPublish().equals("mark"),
                plan.writers(),
                plan.rate(),
                plan.warmUp(),
                m::start,
                plan.duration(),
                relay,
                report.notes,
                latencyDump(delivery));
        for (Results.Latency l : latency.latencies()) {
          report.latency.add(
              new Results.Latency(
                  l.name() + suffix,
                  l.measures(),
                  l.count(),
                  l.p50(),
                  l.p90(),
                  l.p99(),
                  l.max(),
                  l.missing()));
        }
        if (!setup.onPublish().equals("mark")) {
          report.notes.add("commit-to-ack needs published_at: run with --on-publish mark");
        }
        ProcSample after = relay.sample();
        double seconds = (System.nanoTime() - m.started) / 1e9;
        // The relay's CPU while it kept up with the rate (the run's warm-up included), beside the
        // harness's own (writers, consumer) and the machine's idle share: a run whose machine had
        // no idle CPU measured the machine, not the relay.
        cores(report, "relay CPU during the latency run" + suffix, m.before, after, seconds);
        cores(
            report,
            "harness CPU during the latency run" + suffix,
            m.harnessBefore,
            ProcSample.of(ProcessHandle.current().pid()),
            seconds);
        MachineCpu machineAfter = MachineCpu.now();
        Double idleShare =
            m.machineBefore != null && machineAfter != null
                ? machineAfter.idleShareSince(m.machineBefore)
                : null;
        report.loads.add(
            new Results.Load(
                "latency" + suffix,
                plan.rate(),
                Results.round(latency.achieved(), 0),
                latency.pendingAtEnd(),
                idleShare == null ? null : Results.round(idleShare, 3)));
        if (idleShare != null) {
          double idle = idleShare;
          report.settings.put(
              "machine idle during the latency run" + suffix,
              String.format(
                  java.util.Locale.ROOT,
                  "%.0f %% of %d cores",
                  idle * 100,
                  Runtime.getRuntime().availableProcessors()));
          if (idle < MachineCpu.SATURATED_IDLE_SHARE) {
            report.notes.add(
                String.format(
                    java.util.Locale.ROOT,
                    "SATURATED: the machine was %.0f %% idle during the latency run%s (below %.0f"
                        + " %%): its latency figures measure the machine, not the relay",
                    idle * 100,
                    suffix,
                    MachineCpu.SATURATED_IDLE_SHARE * 100));
          }
        }
        if (m.stagesBefore != null) {
          for (StageMetrics.Stage st : StageMetrics.between(m.stagesBefore, stages.scrape())) {
            report.stages.put(name + " " + st.stage(), st);
          }
        } else {
          report.notes.add("no stage figures: the relay's log named no HTTP endpoint");
        }
      }
      ProcSample end = relay.sample();
      if (end != null) {
        report.settings.put(
            "relay peak RSS MiB (whole run)" + suffix, Math.round(end.peakRssBytes() / 1048576.0));
      }
      int exit = relay.stop(Duration.ofSeconds(60));
      report.settings.put("relay exit code" + suffix, exit);
    }
    if (cdc) {
      db.dropSlot(RelayUnderTest.slot(db));
      // The next delivery mode's relay streams from a new slot: offsets of this one's would make
      // it refuse the slot as re-created ("moved past the stored offset") and retry for ever.
      db.forgetCdcOffsets();
    }
    long dead = db.deadLetters();
    if (dead > 0) {
      report.notes.add(dead + " events were dead-lettered: see " + dir.resolve("relay.log"));
    }
    db.truncate();
  }

  /** Whether the run's CDC drains stream their backlog ({@code --cdc-backlog streamed}). */
  private boolean streamedCdc() {
    return plan.relay().source().equals("cdc") && plan.cdcBacklog().equals("streamed");
  }

  /** Reports the insertion beside a streamed drain, and flags a drain the insertion bounded. */
  private void streamed(String name, Results.Streamed s) {
    report.streamed.put(name, s);
    out.printf(
        java.util.Locale.ROOT,
        "bench: %s: backlog inserted in %.1f s (%.0f events/s); drain ended %.1f s after it%n",
        name,
        s.insertSeconds(),
        s.insertEventsPerSecond(),
        s.drainEndAfterInsertSeconds());
    if (s.insertBound()) {
      note(
          "INSERT-BOUND: %s ended %.2f s after the backlog's insertion (%.1f s, %.0f events/s),"
              + " within %.0f %% of it: the relay kept up with the insertion, so its drain"
              + " figure is the insertion's rate, not the relay's limit",
          name,
          s.drainEndAfterInsertSeconds(),
          s.insertSeconds(),
          s.insertEventsPerSecond(),
          Results.Streamed.INSERT_BOUND_SHARE * 100);
    }
  }

  /**
   * Waits until the CDC relay's stream has passed the backlog's WAL ({@link StreamCatchUp}) and
   * reports how long that took; the steps after it (the latency run) meet the steady state.
   */
  private void streamCatchUp(BenchDatabase db, ChildJvm relay, String name) throws Exception {
    step(
        "%s: waiting for the stream to pass the backlog (at most %ds)",
        name, StreamCatchUp.TIMEOUT.toSeconds());
    StreamCatchUp.Outcome o =
        StreamCatchUp.await(name, db, plan.workload(), relay, StreamCatchUp.TIMEOUT);
    report.streamCatchUps.add(o);
    if (o.timedOut()) {
      note(
          "%s: the stream had not passed the backlog %.0f s after the drain (an event committed"
              + " then was still unsettled): TIMED OUT; the latency run includes the rest of"
              + " the stall",
          name, o.seconds());
    }
    out.printf(
        "bench: %s: stream past the backlog %s%n",
        name,
        o.timedOut()
            ? "TIMED OUT after " + o.seconds() + " s"
            : o.seconds() + " s after the drain");
  }

  private void settings() {
    var s = report.settings;
    s.put("command", "outbox-relay bench " + plan.arguments());
    s.put("started", Instant.now().toString());
    s.put("cores", Runtime.getRuntime().availableProcessors());
    s.put("load average at start", loadAverage());
    s.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    s.put("events", plan.workload().events());
    s.put("keys", plan.workload().keys());
    s.put("payload bytes", plan.workload().payloadBytes());
    s.put("source", plan.relay().source());
    s.put("sink", plan.relay().sink());
    s.put("on-publish", plan.relay().onPublish());
    if (plan.relay().source().equals("cdc")) {
      s.put(
          "cdc backlog",
          streamedCdc()
              ? "streamed: inserted once the relay streamed (the Debezium baseline's rows and"
                  + " transactions of 1,000); the drain is the change stream"
              : "table: inserted before the relay started; the drain is its activation's"
                  + " catch-up reading the table, not the stream");
    }
    s.put(
        "delivery",
        plan.deliveries().isEmpty()
            ? "the relay's default (at-least-once)"
            : String.join(", then ", plan.deliveries()));
    s.put("lanes", plan.relay().lanes() != null ? plan.relay().lanes() : "default (2)");
    s.put(
        "batch-size",
        plan.relay().batchSize() != null ? plan.relay().batchSize() : "default (500)");
    s.put("relay jvm options", String.join(" ", plan.relay().jvmOptions()));
    s.put("relay config", plan.relay().extraConfig());
    s.put("kafka partitions", plan.brokers().partitions());
    s.put("kafka producer", plan.brokers().producerSettingsForReport());
    s.put("kafka-clients", version(org.apache.kafka.clients.producer.KafkaProducer.class));
    s.put("amqp-client", version(com.rabbitmq.client.Channel.class));
    s.put("jnats", version(io.nats.client.Nats.class));
    s.put("jedis", version(redis.clients.jedis.Jedis.class));
    s.put("debezium", version(io.debezium.engine.DebeziumEngine.class));
    s.put("writers", plan.writers());
    s.put("rate", plan.rate());
    s.put("duration seconds", plan.duration().toSeconds());
    s.put("latency warm-up seconds", plan.warmUp().toSeconds());
    s.put("work dir", plan.dir().toString());
  }

  private static String version(Class<?> type) {
    String v = type.getPackage().getImplementationVersion();
    if (v != null) {
      return v;
    }
    // Fall back to the jar's file name (…/kafka-clients-4.3.0.jar).
    String location = String.valueOf(type.getProtectionDomain().getCodeSource().getLocation());
    return location.substring(location.lastIndexOf('/') + 1);
  }

  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (Exception e) {
      return "unknown";
    }
  }

  /** Adds a note to the report, formatted in the root locale. */
  private void note(String format, Object... args) {
    report.notes.add(String.format(java.util.Locale.ROOT, format, args));
  }

  private void step(String format, Object... args) {
    out.printf("bench: " + format + " (load %s)%n", append(args, loadAverage()));
    out.flush();
  }

  private static Object[] append(Object[] args, Object last) {
    Object[] all = java.util.Arrays.copyOf(args, args.length + 1);
    all[args.length] = last;
    return all;
  }

  /** Puts the cores a process used between two samples into the report's settings. */
  private static void cores(
      Report report, String key, ProcSample before, ProcSample after, double seconds) {
    if (before == null || after == null || seconds <= 0) {
      return;
    }
    double cpu = after.cpuSeconds() - before.cpuSeconds();
    report.settings.put(
        key,
        String.format(
            java.util.Locale.ROOT,
            "%.2f cores (%.1f CPU s over %.1f s)",
            cpu / seconds,
            cpu,
            seconds));
  }

  /** Where the latency run of {@code delivery} (null: the only one) writes its events, or null. */
  private Path latencyDump(String delivery) {
    Path file = plan.latencyDump();
    if (file == null || delivery == null || plan.deliveries().size() < 2) {
      return file;
    }
    String name = file.getFileName().toString();
    int dot = name.lastIndexOf('.');
    String named =
        dot > 0
            ? name.substring(0, dot) + "-" + delivery + name.substring(dot)
            : name + "-" + delivery;
    return file.resolveSibling(named);
  }

  /** What the latency run's figures are measured from: taken when the warm-up ended. */
  private static final class Measuring {
    private final StageMetrics stages;
    private final ChildJvm relay;
    StageMetrics.Snapshot stagesBefore;
    ProcSample before;
    ProcSample harnessBefore;
    MachineCpu machineBefore;
    long started;

    Measuring(StageMetrics stages, ChildJvm relay) {
      this.stages = stages;
      this.relay = relay;
    }

    void start() throws Exception {
      stagesBefore = stages == null ? null : stages.scrape();
      before = relay.sample();
      harnessBefore = ProcSample.of(ProcessHandle.current().pid());
      machineBefore = MachineCpu.now();
      started = System.nanoTime();
    }
  }
}
