package io.outbox.bench;

import java.io.PrintWriter;
import java.sql.Connection;
import java.util.Locale;

/**
 * What a run measures beside the relay, into its report: the bare client of the sink ({@code raw}),
 * the database's insert rate without and with the relay running ({@code insert}), Debezium's
 * embedded engine ({@code debezium}) and the Kafka Connect connector's drains ({@code --engine
 * connect}).
 */
final class Baselines {

  private final BenchRun.Plan plan;
  private final Report report;
  private final PrintWriter out;

  Baselines(BenchRun.Plan plan, Report report, PrintWriter out) {
    this.plan = plan;
    this.report = report;
    this.out = out;
  }

  /** The insert baselines before any relay runs: without the insert trigger, then with it. */
  void insert(BenchDatabase db) throws Exception {
    db.notifyTrigger(false);
    insert(db, "insert (no trigger)", "the migration's insert trigger disabled");
    db.notifyTrigger(true);
    insert(db, "insert (no relay)", "the trigger notifying on every commit (nobody is busy)");
  }

  /** The bare client of the sink publishing the workload; for Kafka its latency at the rate too. */
  void raw() throws Exception {
    String sink = plan.relay().sink();
    BenchRun.step(out, "raw %s baseline: %d records", sink, plan.workload().events());
    report.throughput.add(rawThroughput(sink));
    if (sink.equals("kafka") && plan.rate() > 0) {
      BenchRun.step(
          out, "raw kafka latency: %d records/s for %ds", plan.rate(), plan.duration().toSeconds());
      report.latency.add(
          RawKafka.latency(
              plan.brokers(), plan.workload(), plan.rate(), plan.duration(), report.settings));
    }
  }

  /** The bare client of {@code sink} publishing the workload, with the relay's window sizes. */
  private Results.Throughput rawThroughput(String sink) throws Exception {
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

  /** Debezium's drain of the workload, with its defaults and tuned; Kafka only. */
  void debezium(BenchDatabase db) throws Exception {
    if (!plan.relay().sink().equals("kafka")) {
      report.notes.add("debezium baseline skipped: it publishes to Kafka (--sink kafka)");
      return;
    }
    for (boolean tuned : new boolean[] {false, true}) {
      BenchRun.step(
          out,
          "debezium baseline (%s): %d events",
          tuned ? "tuned" : "defaults",
          plan.workload().events());
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
  }

  /**
   * The connector's drains, on one worker then on two, each of the same backlog as the daemon's.
   * The workers are the checkout's {@code services.sh connect} ones, started fresh and stopped
   * after.
   */
  void connect(BenchDatabase db) throws Exception {
    // The daemon's figure to compare with: its exactly-once drain when the run has one (the
    // connector runs a Kafka transaction per batch too), else its only one.
    Results.Throughput daemon =
        report.throughput.stream()
            .filter(t -> t.name().startsWith("relay "))
            .reduce(null, (a, t) -> a == null || t.name().endsWith(" exactly-once") ? t : a);
    Results.Throughput one = null;
    for (int workers = 1; workers <= ConnectCluster.PORTS.size(); workers++) {
      String name = ConnectDrain.name(plan.relay(), workers);
      BenchRun.step(
          out,
          "%s: starting the workers, loading %d events, draining",
          name,
          plan.workload().events());
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
    BenchRun.step(out, "%s: %d writers for %ds", name, plan.writers(), plan.duration().toSeconds());
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
  void insertWithRelay(BenchDatabase db, ChildJvm relay) throws Exception {
    Results.Throughput with =
        insert(db, "insert (relay running)", "while the relay drains what they commit");
    report.throughput.stream()
        .filter(t -> t.name().equals("insert (no trigger)"))
        .findFirst()
        .ifPresent(
            without ->
                report.notes.add(
                    String.format(
                        Locale.ROOT,
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
}
