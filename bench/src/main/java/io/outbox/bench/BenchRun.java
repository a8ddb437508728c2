package io.outbox.bench;

import io.outbox.schema.PartitionedLayout;
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
   * How long after a drain its table statistics are read when they are PostgreSQL's counters: a
   * PostgreSQL 15 backend that went idle sends its counts within 10 s ({@code
   * PGSTAT_IDLE_INTERVAL}), so the relay's last marks are in.
   */
  private static final Duration STATISTICS_DELAY = Duration.ofSeconds(11);

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
   * @param layout the outbox's partitioned layout, or {@code null} for the plain one
   * @param weighAfter how long after the drain the outbox is weighed again, or zero for not
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
      Path latencyDump,
      PartitionedLayout layout,
      Duration weighAfter) {}

  private final Plan plan;
  private final PrintWriter out;
  private final Report report = new Report();
  private final Baselines baselines;

  BenchRun(Plan plan, PrintWriter out) {
    this.plan = plan;
    this.out = out;
    this.baselines = new Baselines(plan, report, out);
  }

  Report run() throws Exception {
    long started = System.nanoTime();
    settings();
    String sink = plan.relay().sink();
    plan.brokers().declare(sink);
    try (BenchDatabase db =
        BenchDatabase.create(
            plan.pgUrl(),
            plan.pgUser(),
            plan.pgPassword(),
            "bench_" + plan.run(),
            plan.layout(),
            plan.relay().onPublish().equals("position"))) {
      if (plan.layout() != null) {
        report.settings.put(
            "outbox layout",
            "partitioned, "
                + plan.layout().count()
                + " partitions of "
                + plan.layout().size()
                + " ids");
      }
      try (Connection c = db.connect()) {
        DatabaseMetaData meta = c.getMetaData();
        report.settings.put("postgresql", meta.getDatabaseProductVersion());
      }
      if (plan.baselines().contains("insert")) {
        baselines.insert(db);
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
        baselines.connect(db);
      }
      if (plan.baselines().contains("raw")) {
        baselines.raw();
      }
      if (plan.baselines().contains("debezium")) {
        baselines.debezium(db);
      }
    } finally {
      plan.brokers().remove(sink);
    }
    Targets.evaluate(report, plan.relay(), streamedCdc());
    report.settings.put("load average at end", MachineCpu.loadAverage());
    report.settings.put("run seconds", Math.round((System.nanoTime() - started) / 1e9));
    return report;
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
    BenchDatabase.TableState before = db.tableState();
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
      report.settings.put("outbox before the drain" + suffix, db.tableState().since(before));
      step("%s: draining", name);
      drain =
          RelayDrain.run(
              name, dir, setup, db, plan.brokers(), plan.workload().events(), plan.timeout());
    }
    report.throughput.add(drain.throughput());
    BenchDatabase.TableState after = db.tableState();
    if (!after.exact()) {
      Thread.sleep(STATISTICS_DELAY.toMillis());
      after = db.tableState();
    }
    report.settings.put("outbox after the drain" + suffix, after.since(before));
    if (!plan.weighAfter().isZero()) {
      Thread.sleep(plan.weighAfter().toMillis()); // retention's turn (--relay-config retention)
      report.settings.put(
          "outbox " + plan.weighAfter().toSeconds() + " s after the drain" + suffix,
          db.tableState().since(before));
    }
    try (ChildJvm relay = drain.relay()) {
      if (cdc && plan.rate() > 0) {
        streamCatchUp(db, relay, name);
      }
      if (withInsert && plan.baselines().contains("insert")) {
        baselines.insertWithRelay(db, relay);
      }
      if (plan.rate() > 0) {
        step(
            "latency: %d events/s for %ds after %ds unmeasured",
            plan.rate(), plan.duration().toSeconds(), plan.warmUp().toSeconds());
        new LatencyStep(plan, report).run(db, setup, dir, relay, name, delivery);
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
    s.put("load average at start", MachineCpu.loadAverage());
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
    s.put(
        "relay jvm options",
        String.join(" ", RelayUnderTest.jvmOptions(plan.relay().jvmOptions())));
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

  /** Adds a note to the report, formatted in the root locale. */
  private void note(String format, Object... args) {
    report.notes.add(String.format(java.util.Locale.ROOT, format, args));
  }

  private void step(String format, Object... args) {
    step(out, format, args);
  }

  /** Prints a step of a run, with the machine's load average. */
  static void step(PrintWriter out, String format, Object... args) {
    out.printf("bench: " + format + " (load %s)%n", append(args, MachineCpu.loadAverage()));
    out.flush();
  }

  private static Object[] append(Object[] args, Object last) {
    Object[] all = java.util.Arrays.copyOf(args, args.length + 1);
    all[args.length] = last;
    return all;
  }
}
