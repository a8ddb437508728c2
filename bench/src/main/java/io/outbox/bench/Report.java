package io.outbox.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything a bench run found: the settings, the throughput and latency figures, the ratios and
 * the targets of issue #7; printed as a table and written as JSON.
 */
final class Report {

  /**
   * One target of the issue and how the run did.
   *
   * @param target e.g. {@code polling->kafka drain >= 40000 events/s}
   * @param actual the measured value
   * @param met whether the target is met
   */
  record Target(String target, double actual, boolean met) {}

  final Map<String, Object> settings = new LinkedHashMap<>();
  final List<Results.Throughput> throughput = new ArrayList<>();
  final List<Results.Latency> latency = new ArrayList<>();
  final List<Results.Load> loads = new ArrayList<>();
  final Map<String, StageMetrics.Stage> stages = new LinkedHashMap<>();
  final Map<String, Results.Streamed> streamed = new LinkedHashMap<>();
  final List<StreamCatchUp.Outcome> streamCatchUps = new ArrayList<>();
  final Map<String, Double> ratios = new LinkedHashMap<>();
  final List<Target> targets = new ArrayList<>();
  final List<String> notes = new ArrayList<>();

  Results.Throughput find(String name) {
    return throughput.stream().filter(t -> t.name().equals(name)).findFirst().orElse(null);
  }

  /**
   * Adds {@code a / b} under {@code name} when both figures exist, to three significant digits (a
   * ratio far below 1, such as a 200-event drain beside a bare client, stays above zero).
   */
  void ratio(String name, Results.Throughput a, Results.Throughput b) {
    if (a != null && b != null && b.eventsPerSecond() > 0) {
      ratios.put(
          name,
          new java.math.BigDecimal(a.eventsPerSecond() / b.eventsPerSecond())
              .round(new java.math.MathContext(3))
              .doubleValue());
    }
  }

  void target(String target, double actual, boolean met) {
    targets.add(new Target(target, Results.round(actual, 3), met));
  }

  void print(PrintWriter out) {
    out.println();
    out.println("outbox-relay bench");
    settings.forEach((k, v) -> out.printf("  %-22s %s%n", k, v));
    out.println();
    out.printf(
        "%-34s %10s %12s %10s %10s %12s %10s %7s%n",
        "throughput",
        "events",
        "events/s",
        "seconds",
        "w/startup",
        "cpu s/10k",
        "peak RSS",
        "idle");
    for (Results.Throughput t : throughput) {
      Results.Footprint f = t.footprint();
      out.printf(
          "%-34s %10d %12.0f %10.2f %10s %12s %10s %7s%n",
          t.name(),
          t.events(),
          t.eventsPerSecond(),
          t.seconds(),
          t.withStartupPerSecond() > 0 ? String.format("%.0f", t.withStartupPerSecond()) : "-",
          f == null ? "-" : String.format("%.3f", f.cpuSecondsPer10k()),
          f == null ? "-" : String.format("%.0f MiB", f.peakRssMiB()),
          f == null || f.machineIdleShare() == null
              ? "-"
              : String.format("%.0f %%", f.machineIdleShare() * 100));
    }
    if (!latency.isEmpty()) {
      out.println();
      out.printf(
          "%-34s %8s %9s %9s %9s %9s %8s%n",
          "latency (ms)", "count", "p50", "p90", "p99", "max", "missing");
      for (Results.Latency l : latency) {
        out.printf(
            "%-34s %8d %9.2f %9.2f %9.2f %9.2f %8d%n",
            l.name(), l.count(), l.p50(), l.p90(), l.p99(), l.max(), l.missing());
      }
    }
    if (!streamCatchUps.isEmpty()) {
      out.println();
      out.printf("%-34s %9s   %s%n", "cdc stream past the backlog (s)", "after", "(the drain)");
      for (StreamCatchUp.Outcome o : streamCatchUps) {
        out.printf("%-34s %9.2f%s%n", o.name(), o.seconds(), o.timedOut() ? "   TIMED OUT" : "");
      }
    }
    if (!stages.isEmpty()) {
      out.println();
      out.printf(
          "%-34s %8s %9s %9s   %s%n",
          "relay stages (ms)", "count", "p50", "p99", "(from /metrics)");
      stages.forEach(
          (name, st) ->
              out.printf("%-34s %8d %9.2f %9.2f%n", name, st.count(), st.p50(), st.p99()));
    }
    if (!streamed.isEmpty()) {
      out.println();
      out.printf(
          "%-34s %9s %9s %9s %9s %11s %10s%n",
          "streamed CDC backlog",
          "insert s",
          "insert/s",
          "end after",
          "pending",
          "after ins/s",
          "cpu s/10k");
      streamed.forEach(
          (name, s) ->
              out.printf(
                  "%-34s %9.2f %9.0f %9.2f %9d %11s %10s%s%n",
                  name,
                  s.insertSeconds(),
                  s.insertEventsPerSecond(),
                  s.drainEndAfterInsertSeconds(),
                  s.pendingAtInsertEnd(),
                  s.afterInsertEventsPerSecond() == null
                      ? "-"
                      : String.format("%.0f", s.afterInsertEventsPerSecond()),
                  s.afterInsertCpuSecondsPer10k() == null
                      ? "-"
                      : String.format("%.3f", s.afterInsertCpuSecondsPer10k()),
                  s.insertBound() ? "  INSERT-BOUND" : ""));
    }
    if (!ratios.isEmpty()) {
      out.println();
      ratios.forEach((k, v) -> out.printf("  %-44s %6s%n", k, v));
    }
    if (!targets.isEmpty()) {
      out.println();
      out.println("targets (issue #7; exactly-once / at-least-once: issue #14)");
      for (Target t : targets) {
        out.printf("  %-56s %12.3f  %s%n", t.target(), t.actual(), t.met() ? "met" : "MISSED");
      }
    }
    notes.forEach(n -> out.println("note: " + n));
    out.flush();
  }

  void writeJson(Path file) throws IOException {
    write(file, toJson());
  }

  /** The report as the JSON of {@link #writeJson}: one map, for embedding in a curve's JSON. */
  Map<String, Object> toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("settings", settings);
    json.put("throughput", throughput);
    json.put("latency", latency);
    json.put("loads", loads);
    json.put("stages", stages);
    json.put("streamed", streamed);
    json.put("streamCatchUps", streamCatchUps);
    json.put("ratios", ratios);
    json.put("targets", targets);
    json.put("notes", notes);
    return json;
  }

  static void write(Path file, Object json) throws IOException {
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), json);
  }
}
