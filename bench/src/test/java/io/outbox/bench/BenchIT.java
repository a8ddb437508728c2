package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Smoke test of the harness against the local services: a small polling -> Kafka run (and smaller
 * NATS and Redis runs) with the raw baseline and a short latency run completes and writes sane
 * JSON; the refusals of options off their path. No figure is asserted beyond "counted and
 * positive": benchmarks are not timed tests. {@link BenchDeliveriesIT} runs both delivery modes and
 * the streamed CDC drain (a class of its own, so that the two test JVMs share the module's runs).
 */
class BenchIT {

  @TempDir Path dir;

  @Test
  void smallRunPrintsTableAndWritesJson() throws Exception {
    Path json = dir.resolve("bench.json");
    StringWriter out = new StringWriter();
    Path dump = dir.resolve("latency.txt");
    BenchRuns.smallRun(
        dir,
        json,
        out,
        500,
        "--baselines",
        "raw",
        "--warm-up",
        "1",
        "--latency-dump",
        dump.toString());

    assertThat(out.toString()).contains("relay polling->kafka mark", "raw kafka", "targets");
    JsonNode report = new ObjectMapper().readTree(json.toFile());
    assertThat(report.at("/settings/events").asInt()).isEqualTo(500);
    assertThat(report.at("/settings/cores").asInt()).isPositive();
    assertThat(report.at("/settings/relay exit code").asInt()).isZero();
    // Counted by pgstattuple, not estimated (how many depends on autovacuum and page pruning).
    assertThat(report.at("/settings/outbox after the drain").asText())
        .startsWith("500 rows, ")
        .doesNotContain("(statistics)")
        // 500 rows of the heap weigh something: a weighing that missed the table reads 0.0.
        .matches(
            "500 rows, [0-9,]+ dead tuples, heap (?!0\\.0 )[0-9.]+ MiB, indexes [0-9.]+ MiB, .*");
    List<String> names = new ArrayList<>();
    for (JsonNode t : report.get("throughput")) {
      names.add(t.get("name").asText());
      assertThat(t.get("events").asLong()).as(t.toString()).isBetween(1L, 500L);
      assertThat(t.get("eventsPerSecond").asDouble()).as(t.toString()).isPositive();
    }
    assertThat(names).containsExactly("relay polling->kafka mark", "raw kafka");
    JsonNode relay = report.get("throughput").get(0);
    assertThat(relay.at("/footprint/peakRssMiB").asDouble()).isPositive();
    assertThat(relay.at("/footprint/cpuSeconds").asDouble()).isPositive();
    for (JsonNode l : report.get("latency")) {
      assertThat(l.get("count").asLong()).as(l.toString()).isPositive();
      assertThat(l.get("missing").asLong()).as(l.toString()).isZero();
      assertThat(l.get("p99").asDouble()).isGreaterThanOrEqualTo(l.get("p50").asDouble());
    }
    List<String> latencies = new ArrayList<>();
    report.get("latency").forEach(l -> latencies.add(l.get("name").asText()));
    assertThat(latencies)
        .containsExactly(
            "commit-to-consumer-receive", "commit-to-ack (published_at)", "raw kafka send-to-ack");
    assertThat(report.get("ratios").has("relay / raw")).isTrue();
    // The relay's own stage histograms over the latency run, and the CPU accounting.
    JsonNode stages = report.get("stages");
    for (String stage : List.of("wake", "claim", "publish", "settle")) {
      JsonNode st = stages.get("relay polling->kafka mark " + stage);
      assertThat(st).as(stage + " in " + stages).isNotNull();
      assertThat(st.get("count").asLong()).as(stage).isPositive();
      assertThat(st.get("p99").asDouble())
          .as(stage)
          .isGreaterThanOrEqualTo(st.get("p50").asDouble());
    }
    assertThat(report.at("/settings/harness CPU during the latency run").asText())
        .contains("cores");
    assertThat(report.at("/settings/machine idle during the latency run").asText())
        .contains("% of");
    // The stages count the measured events (2 s at 100/s), not the 1-s warm-up's 100 before them.
    assertThat(report.at("/settings/latency warm-up seconds").asInt()).isEqualTo(1);
    long measured = report.get("latency").get(1).get("count").asLong();
    assertThat(stages.get("relay polling->kafka mark wake").get("count").asLong())
        .as("wake stage events against %d measured", measured)
        .isLessThanOrEqualTo(measured + 60);
    assertThat(Files.readString(dir.resolve("work/relay.log"))).doesNotContain("ERROR");
    // Every measured event's timings, in commit order, as the histograms counted them.
    List<String> lines = Files.readAllLines(dump);
    assertThat(lines.get(0)).startsWith("# commit_epoch_micros");
    assertThat(lines).hasSize(1 + (int) report.get("latency").get(0).get("count").asLong());
    long previous = 0;
    for (String line : lines.subList(1, lines.size())) {
      long[] f = Arrays.stream(line.split(" ")).mapToLong(Long::parseLong).toArray();
      assertThat(f).as(line).hasSize(3);
      assertThat(f[0]).as(line).isGreaterThanOrEqualTo(previous);
      assertThat(f[1]).as("received: " + line).isNotNegative();
      assertThat(f[2]).as("acked: " + line).isNotNegative();
      previous = f[0];
    }
  }

  @Test
  void refusesAStreamedBacklogWithoutTheCdcSource() {
    assertThat(refusal("--cdc-backlog", "streamed")).contains("--cdc-backlog needs --source cdc");
  }

  @ParameterizedTest
  @ValueSource(strings = {"nats", "redis"})
  void streamSinksRunBesideTheirBareClient(String sink) throws Exception {
    Path json = dir.resolve("bench.json");
    StringWriter out = new StringWriter();
    BenchRuns.smallRun(dir, json, out, 200, "--sink", sink, "--baselines", "raw");

    JsonNode report = new ObjectMapper().readTree(json.toFile());
    List<String> names = new ArrayList<>();
    for (JsonNode t : report.get("throughput")) {
      names.add(t.get("name").asText());
      assertThat(t.get("events").asLong()).as(t.toString()).isBetween(1L, 200L);
      assertThat(t.get("eventsPerSecond").asDouble()).as(t.toString()).isPositive();
    }
    assertThat(names).containsExactly("relay polling->" + sink + " mark", "raw " + sink);
    assertThat(report.at("/ratios/relay ~1 raw").asDouble()).isPositive();
    // The harness's consumer of the stream received every event the writers committed.
    assertThat(BenchRuns.latencies(report))
        .containsExactly("commit-to-consumer-receive", "commit-to-ack (published_at)");
    assertThat(report.at("/settings/relay exit code").asInt()).isZero();
    assertThat(Files.readString(dir.resolve("work/relay.conf")))
        .contains("sink.type = " + sink, "sink." + sink + ".");
    assertThat(Files.readString(dir.resolve("work/relay.log"))).doesNotContain("ERROR");
  }

  /**
   * A rate curve of two points: each point is a run of its own (a drain of 100 events, then 2 s at
   * the point's rate), the curve's JSON carries the points and every run, and the SVG plot names
   * its series. On a machine so loaded that the writers or the relay cannot keep up with 40
   * events/s the curve stops after the first point, and says why.
   */
  @Test
  void rateCurveWritesItsPointsAndAPlot() throws Exception {
    Path json = dir.resolve("curve.json");
    StringWriter out = new StringWriter();
    BenchRuns.smallRun(dir, json, out, 100, "--curve", "rate", "--rates", "80,40");

    JsonNode curve = new ObjectMapper().readTree(json.toFile());
    JsonNode points = curve.get("points");
    String stopped = curve.get("stopped").asText();
    if (points.size() == 1) {
      assertThat(stopped).as("a one-point curve").startsWith("saturated at 40 events/s");
    } else {
      assertThat(points.size()).as(stopped).isEqualTo(2);
      assertThat(points.get(1).get("x").asLong()).isEqualTo(80);
    }
    // The rates run in ascending order, each with its own run and work directory.
    assertThat(points.get(0).get("x").asLong()).isEqualTo(40);
    for (JsonNode p : points) {
      assertThat(p.get("ackP99").asDouble()).as(p.toString()).isPositive();
      assertThat(p.get("ackP99").asDouble()).isGreaterThanOrEqualTo(p.get("ackP50").asDouble());
      assertThat(p.get("rawP99").asDouble()).as(p.toString()).isPositive();
      assertThat(p.get("achieved").asDouble()).as(p.toString()).isPositive();
      assertThat(dir.resolve("work/rate-" + p.get("x").asLong() + "/relay.log")).exists();
    }
    assertThat(curve.get("runs").size()).isEqualTo(points.size());
    assertThat(curve.at("/runs/0/settings/rate").asInt()).isEqualTo(40);
    assertThat(curve.at("/runs/0/settings/relay exit code").asInt()).isZero();
    assertThat(curve.at("/settings/curve").asText()).isEqualTo("rate");
    assertThat(out.toString()).contains("rate curve, polling->kafka mark");

    Path svg = dir.resolve("curve.svg");
    assertThat(svg).exists();
    String plot = Files.readString(svg);
    assertThat(plot)
        .startsWith("<svg")
        .contains(
            "relay commit-to-ack p50",
            "relay commit-to-ack p99",
            "bare producer send-to-ack p99",
            "commit-to-ack latency against the rate");
  }

  @Test
  void refusesAPlotWithoutACurve() {
    assertThat(refusal("--svg", dir.resolve("x.svg").toString())).contains("--svg needs --curve");
    assertThat(refusal("--latency-dump", dir.resolve("x.txt").toString(), "--rate", "0"))
        .contains("--latency-dump needs a latency run");
  }

  /** {@code bench args --skip-services}, refused before anything runs: its stderr. */
  private static String refusal(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--skip-services");
    StringWriter err = new StringWriter();
    int exit =
        BenchMain.execute(
            new PrintWriter(new StringWriter()), new PrintWriter(err), all.toArray(String[]::new));
    assertThat(exit).as("exit code; stderr: %s", err).isEqualTo(2);
    return err.toString();
  }

  /**
   * {@code --engine connect} is refused, before anything runs, where the connector cannot go. A run
   * of it is not part of the suite: starting the Connect workers twice (one, then two) takes 1-3
   * minutes on its own; docs/kafka-connect.md gives the command and its figures.
   */
  @Test
  void refusesTheConnectEngineOffItsPath() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        BenchMain.execute(
            new PrintWriter(out),
            new PrintWriter(err),
            "--engine",
            "connect",
            "--sink",
            "rabbitmq",
            "--skip-services");
    assertThat(exit).as("stdout: %s", out).isEqualTo(2);
    assertThat(err.toString()).contains("--engine connect needs --source polling and --sink kafka");
  }
}
