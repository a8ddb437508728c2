package io.outbox.bench;

import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A curve ({@code bench --curve}): one {@link BenchRun} per point, each with its own database,
 * destination, relay and work directory, at each rate of the latency run or each backlog of the
 * drain; a rate curve stops at the first point that saturated ({@link Curve#saturation}).
 */
final class CurveRun {

  /**
   * What a curve found.
   *
   * @param points the points measured, in order
   * @param json the curve's JSON: its settings, points, why it stopped, every point's full report
   * @param svg the plot
   */
  record Outcome(List<Curve.Point> points, Map<String, Object> json, String svg) {}

  private final BenchRun.Plan base;
  private final String kind;
  private final List<Integer> xs;
  private final PrintWriter out;

  /**
   * @param base the run's plan; each point replaces its run id, work directory and destinations,
   *     and its rate ({@code rate}) or its backlog with no latency run ({@code backlog})
   * @param kind {@code rate} or {@code backlog}
   * @param xs the rates (events/s) or backlogs (events), ascending
   */
  CurveRun(BenchRun.Plan base, String kind, List<Integer> xs, PrintWriter out) {
    this.base = base;
    this.kind = kind;
    this.xs = xs;
    this.out = out;
  }

  Outcome run() throws Exception {
    long started = System.nanoTime();
    Map<String, Object> settings = new LinkedHashMap<>();
    settings.put("command", "outbox-relay bench " + base.arguments());
    settings.put("curve", kind);
    settings.put(kind.equals("rate") ? "rates" : "backlogs", xs);
    settings.put("started", Instant.now().toString());
    settings.put("cores", Runtime.getRuntime().availableProcessors());
    settings.put("load average at start", MachineCpu.loadAverage());
    settings.put("source", base.relay().source());
    settings.put("sink", base.relay().sink());
    settings.put("on-publish", base.relay().onPublish());
    if (base.relay().source().equals("cdc")) {
      settings.put("cdc backlog", base.cdcBacklog());
    }
    settings.put("payload bytes", base.workload().payloadBytes());
    if (kind.equals("rate")) {
      settings.put("drain events per point", base.workload().events());
      settings.put("writers", base.writers());
      settings.put("duration seconds", base.duration().toSeconds());
      settings.put(
          "saturation",
          String.format(
              Locale.ROOT,
              "the curve stops at the first rate where the writers committed less than %.0f %% of"
                  + " it, more than %.0f s of it was pending when they stopped, or an event was"
                  + " never acknowledged; a machine below %.0f %% idle is reported, not a stop",
              Curve.ACHIEVED_SHARE * 100,
              Curve.PENDING_SECONDS,
              MachineCpu.SATURATED_IDLE_SHARE * 100));
    }
    List<Curve.Point> points = new ArrayList<>();
    List<Map<String, Object>> runs = new ArrayList<>();
    String stopped = null;
    // The first point not run: after the one the curve stopped at.
    int next = xs.size();
    for (int i = 0; i < xs.size(); i++) {
      int x = xs.get(i);
      BenchRun.Plan plan = point(i, x);
      out.printf(
          "bench: %s curve, point %d of %d: %s, run %s (load %s)%n",
          kind, i + 1, xs.size(), describe(x), plan.run(), MachineCpu.loadAverage());
      out.flush();
      MachineCpu before = MachineCpu.now();
      Report report;
      try {
        report = new BenchRun(plan, out).run();
      } catch (IllegalStateException e) {
        stopped = "failed at " + describe(x) + ": " + e.getMessage();
        next = i + 1;
        break;
      }
      MachineCpu after = MachineCpu.now();
      report.print(out);
      Curve.Point p =
          Curve.Point.of(
              x,
              plan.run(),
              report,
              before == null || after == null
                  ? null
                  : Results.round(after.idleShareSince(before), 3));
      points.add(p);
      runs.add(report.toJson());
      if (p.saturation() != null) {
        stopped = "saturated at " + describe(x) + ": " + p.saturation();
        next = i + 1;
        break;
      }
    }
    if (next < xs.size()) {
      stopped += "; not run: " + xs.subList(next, xs.size());
    }
    settings.put("load average at end", MachineCpu.loadAverage());
    settings.put("run seconds", Math.round((System.nanoTime() - started) / 1e9));
    String path =
        base.relay().source() + "->" + base.relay().sink() + " " + base.relay().onPublish();
    Curve.print(out, kind, path, points);
    if (stopped != null) {
      out.println("curve: stopped, " + stopped);
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("settings", settings);
    json.put("points", points);
    json.put("stopped", stopped);
    json.put("runs", runs);
    return new Outcome(points, json, Curve.svg(kind, path, subtitle(settings, points), points));
  }

  private String describe(int x) {
    return kind.equals("rate") ? x + " events/s" : "a backlog of " + x + " events";
  }

  /** The plan of point {@code i}: its own run id, directory and destinations. */
  private BenchRun.Plan point(int i, int x) {
    String run = base.run() + "p" + (i + 1);
    Brokers b = base.brokers();
    boolean rate = kind.equals("rate");
    return new BenchRun.Plan(
        run,
        base.dir().resolve(kind + "-" + x),
        rate
            ? base.workload()
            : new Workload(x, base.workload().keys(), base.workload().payloadBytes()),
        base.relay(),
        new Brokers(
            b.kafkaBootstrap(),
            b.rabbitUri(),
            b.natsUrl(),
            b.redisUri(),
            "bench-" + run + ".",
            b.partitions(),
            b.lingerMs()),
        base.baselines(),
        rate ? x : 0,
        base.duration(),
        base.warmUp(),
        base.writers(),
        base.timeout(),
        base.deliveries(),
        base.engine(),
        base.home(),
        base.cdcBacklog(),
        base.pgUrl(),
        base.pgUser(),
        base.pgPassword(),
        base.arguments(),
        null,
        base.layout(),
        base.weighAfter());
  }

  /** When, on what machine under what load, and with what workload: the plot's second line. */
  private String subtitle(Map<String, Object> settings, List<Curve.Point> points) {
    StringBuilder s = new StringBuilder();
    s.append(
        DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")
            .withZone(ZoneOffset.UTC)
            .format(Instant.parse((String) settings.get("started"))));
    s.append(", ").append(settings.get("cores")).append(" cores, load avg ");
    s.append(first(settings.get("load average at start")))
        .append(" → ")
        .append(first(settings.get("load average at end")));
    double lo = 1;
    double hi = 0;
    for (Curve.Point p : points) {
      if (p.machineIdleShare() != null) {
        lo = Math.min(lo, p.machineIdleShare());
        hi = Math.max(hi, p.machineIdleShare());
      }
    }
    if (hi >= lo) {
      String l = String.format(Locale.ROOT, "%.0f", lo * 100);
      String h = String.format(Locale.ROOT, "%.0f", hi * 100);
      s.append(", idle ").append(l.equals(h) ? l : l + "–" + h).append(" %");
    }
    if (kind.equals("rate")) {
      s.append(", ")
          .append(base.writers())
          .append(" writers × ")
          .append(base.duration().toSeconds())
          .append(" s");
    }
    s.append(", ").append(base.workload().payloadBytes()).append(" B events");
    return s.toString();
  }

  private static String first(Object loadAverage) {
    return String.valueOf(loadAverage).split(" ")[0];
  }
}
