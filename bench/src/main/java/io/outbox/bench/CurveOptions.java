package io.outbox.bench;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bench}'s curve options (which curve, its points, where its plot goes), their checks, and
 * the curve's run: its points one run each, then its plot and JSON.
 */
final class CurveOptions {

  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  @Option(
      names = "--curve",
      paramLabel = "rate|backlog",
      description =
          "Measure a curve, one run per point, each with its own database, topic and relay."
              + " rate: the latency run at each of --rates (after a drain of --events), beside"
              + " the bare producer's latency at the same rate (Kafka, unless --baselines none),"
              + " stopping at the first rate the writers or the relay could not keep up with."
              + " backlog: the drain of each of --backlogs, no latency run. Prints a table,"
              + " writes an SVG plot (--svg) and, with --json, every point. The insert and"
              + " debezium baselines are not run per point.")
  String kind;

  @Option(
      names = "--rates",
      paramLabel = "LIST",
      split = ",",
      defaultValue = "100,1000,5000,10000,20000",
      description = "Events/s of a rate curve's points (default: ${DEFAULT-VALUE}).")
  List<Integer> rates;

  @Option(
      names = "--backlogs",
      paramLabel = "LIST",
      split = ",",
      defaultValue = "10000,100000,1000000",
      description = "Backlogs of a backlog curve's points (default: ${DEFAULT-VALUE}).")
  List<Integer> backlogs;

  @Option(
      names = "--svg",
      paramLabel = "FILE",
      description =
          "Where a curve's plot goes (default: the --json file with .svg, else curve-<kind>.svg"
              + " in the work directory).")
  Path svg;

  /** Refuses what a curve cannot do, and --svg without a curve. */
  void check(String engine, String delivery, List<String> baselines) {
    if (kind == null) {
      BenchCommand.check(command, svg == null, "--svg needs --curve");
      return;
    }
    BenchCommand.check(
        command,
        List.of("rate", "backlog").contains(kind),
        "--curve must be rate or backlog, not '" + kind + "'");
    List<Integer> xs = kind.equals("rate") ? rates : backlogs;
    BenchCommand.check(
        command,
        !xs.isEmpty() && xs.stream().allMatch(x -> x >= 1),
        "--" + (kind.equals("rate") ? "rates" : "backlogs") + " must be >= 1: " + xs);
    BenchCommand.check(
        command,
        engine.equals("daemon") && !"both".equals(delivery),
        "--curve measures one relay per point: not with --engine connect or --delivery both");
    BenchCommand.check(
        command,
        !baselinesGiven() || baselines.stream().allMatch(b -> b.equals("raw") || b.equals("none")),
        "--curve runs the raw baseline at most (per point), not " + baselines);
  }

  /** The baselines of a curve's points: what fits a point, unless --baselines named them. */
  List<String> baselines(List<String> asked, String sink) {
    if (baselinesGiven()) {
      return asked;
    }
    return kind.equals("rate") && sink.equals("kafka") ? List.of("raw") : List.of("none");
  }

  private boolean baselinesGiven() {
    return command.commandLine().getParseResult().hasMatchedOption("--baselines");
  }

  /** Runs the curve and writes its plot and, with {@code json}, its JSON; the exit code. */
  int run(BenchRun.Plan plan, Path dir, Path json, PrintWriter out) throws Exception {
    List<Integer> xs = (kind.equals("rate") ? rates : backlogs).stream().sorted().toList();
    CurveRun.Outcome outcome = new CurveRun(plan, kind, xs, out).run();
    Path plot = svg;
    if (plot == null) {
      plot =
          json != null
              ? json.resolveSibling(
                  json.getFileName().toString().replaceFirst("(\\.json)?$", ".svg"))
              : dir.resolve("curve-" + kind + ".svg");
    }
    Files.writeString(plot, outcome.svg());
    out.println("bench: wrote " + plot);
    if (json != null) {
      Report.write(json, outcome.json());
      out.println("bench: wrote " + json);
    }
    out.flush();
    return outcome.points().isEmpty() ? 1 : 0;
  }
}
