package io.outbox.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

/**
 * The latency run of one relay, into the report: writers commit at {@code --rate} while the relay
 * runs; from the end of the warm-up on, the relay's, the harness's and the machine's CPU and the
 * relay's stage histograms are measured beside the latencies.
 */
final class LatencyStep {

  private final BenchRun.Plan plan;
  private final Report report;

  LatencyStep(BenchRun.Plan plan, Report report) {
    this.plan = plan;
    this.report = report;
  }

  /**
   * Runs it against {@code relay} (named {@code name}, its config and log in {@code dir}); {@code
   * delivery} names its figures (null: unnamed).
   */
  void run(
      BenchDatabase db,
      RelayUnderTest.Setup setup,
      Path dir,
      ChildJvm relay,
      String name,
      String delivery)
      throws Exception {
    String suffix = delivery == null ? "" : " " + delivery;
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
    activation(dir, m.startedAt, suffix);
    ProcSample after = relay.sample();
    double seconds = (System.nanoTime() - m.started) / 1e9;
    // The relay's CPU while it kept up with the rate (the run's warm-up included), beside the
    // harness's own (writers, consumer) and the machine's idle share: a run whose machine had
    // no idle CPU measured the machine, not the relay.
    cores("relay CPU during the latency run" + suffix, m.before, after, seconds);
    cores(
        "harness CPU during the latency run" + suffix,
        m.harnessBefore,
        ProcSample.of(ProcessHandle.current().pid()),
        seconds);
    machine(latency, suffix, m.machineBefore, MachineCpu.now());
    if (m.stagesBefore != null) {
      for (StageMetrics.Stage st : StageMetrics.between(m.stagesBefore, stages.scrape())) {
        report.stages.put(name + " " + st.stage(), st);
      }
    } else {
      report.notes.add("no stage figures: the relay's log named no HTTP endpoint");
    }
  }

  /**
   * How long after the relay's latest activation (its log's {@code active} line) the measured
   * window began: with {@code --warm-up 0} and a small backlog, the run measures the first seconds
   * of an active relay (a start, a take-over), and this says which.
   */
  private void activation(Path dir, Instant measuredFrom, String suffix) throws IOException {
    Instant active = RelayActivation.lastIn(dir.resolve("relay.log"));
    if (active == null || measuredFrom == null) {
      return;
    }
    report.settings.put(
        "latency run began after the relay became active" + suffix,
        String.format(
            Locale.ROOT,
            "%.1f s (its log's active line at %s)",
            Duration.between(active, measuredFrom).toMillis() / 1000.0,
            active));
  }

  /** The load the run reached and the machine's idle share over it; flags a saturated machine. */
  private void machine(
      LatencyRun.Outcome latency, String suffix, MachineCpu before, MachineCpu after) {
    Double idleShare = before != null && after != null ? after.idleShareSince(before) : null;
    report.loads.add(
        new Results.Load(
            "latency" + suffix,
            plan.rate(),
            Results.round(latency.achieved(), 0),
            latency.pendingAtEnd(),
            idleShare == null ? null : Results.round(idleShare, 3)));
    if (idleShare == null) {
      return;
    }
    double idle = idleShare;
    report.settings.put(
        "machine idle during the latency run" + suffix,
        String.format(
            Locale.ROOT,
            "%.0f %% of %d cores",
            idle * 100,
            Runtime.getRuntime().availableProcessors()));
    if (idle < MachineCpu.SATURATED_IDLE_SHARE) {
      report.notes.add(
          String.format(
              Locale.ROOT,
              "SATURATED: the machine was %.0f %% idle during the latency run%s (below %.0f"
                  + " %%): its latency figures measure the machine, not the relay",
              idle * 100,
              suffix,
              MachineCpu.SATURATED_IDLE_SHARE * 100));
    }
  }

  /** Puts the cores a process used between two samples into the report's settings. */
  private void cores(String key, ProcSample before, ProcSample after, double seconds) {
    if (before == null || after == null || seconds <= 0) {
      return;
    }
    double cpu = after.cpuSeconds() - before.cpuSeconds();
    report.settings.put(
        key,
        String.format(
            Locale.ROOT, "%.2f cores (%.1f CPU s over %.1f s)", cpu / seconds, cpu, seconds));
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
    Instant startedAt;

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
      startedAt = Instant.now();
    }
  }
}
