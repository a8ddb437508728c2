package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class CurveTest {

  @Test
  void aRateIsKeptUpWithWhenTheWritersReachItAndLittleIsPending() {
    assertThat(Curve.saturation(1000, 995, 40, 0)).isNull();
    assertThat(Curve.saturation(1000, 900, 1000, 0)).isNull();
  }

  @Test
  void theWritersFallingShortSaturatesTheCurve() {
    assertThat(Curve.saturation(5000, 1482, 12, 0))
        .isEqualTo("the writers reached 1482 of the 5000 events/s (< 90 %)");
  }

  @Test
  void aGrowingBacklogOrUnacknowledgedEventsSaturateTheCurve() {
    assertThat(Curve.saturation(1000, 1000, 1001, 0))
        .isEqualTo(
            "the relay fell behind: 1001 events pending when the writers stopped (> 1 s of the"
                + " rate)");
    assertThat(Curve.saturation(1000, 1000, 0, 3))
        .isEqualTo("the relay fell behind: 3 events never acknowledged");
    assertThat(Curve.saturation(5000, 100, 9000, 0)).contains("writers reached", "; the relay");
  }

  @Test
  void aPointTakesItsRunsFigures() {
    Report r = new Report();
    r.throughput.add(
        new Results.Throughput(
            "relay polling->kafka mark",
            "",
            9000,
            1,
            9000,
            5000,
            new Results.Footprint(3, 0.4, 0.444, 210, 0.2)));
    r.throughput.add(new Results.Throughput("raw kafka", "", 10000, 0.1, 100000, 0, null));
    r.latency.add(new Results.Latency("commit-to-consumer-receive", "", 100, 5, 8, 40, 60, 0));
    r.latency.add(new Results.Latency("commit-to-ack (published_at)", "", 100, 4, 7, 30, 50, 0));
    r.latency.add(new Results.Latency("raw kafka send-to-ack", "", 100, 1, 2, 3, 9, 0));
    r.loads.add(new Results.Load("latency", 5000, 1482, 12, 0.02));

    Curve.Point p = Curve.Point.of(5000, "abcp3", r, 0.5);

    assertThat(p.drainEventsPerSecond()).isEqualTo(9000);
    assertThat(p.drainCpuSecondsPer10k()).isEqualTo(0.444);
    assertThat(p.peakRssMiB()).isEqualTo(210);
    assertThat(p.ackP50()).isEqualTo(4);
    assertThat(p.ackP99()).isEqualTo(30);
    assertThat(p.receiveP99()).isEqualTo(40);
    assertThat(p.rawP99()).isEqualTo(3);
    assertThat(p.achieved()).isEqualTo(1482);
    // The latency run's idle share, not the whole point's.
    assertThat(p.machineIdleShare()).isEqualTo(0.02);
    assertThat(p.saturation()).startsWith("the writers reached 1482");
  }

  @Test
  void aBacklogPointHasNoLatencyAndNeverSaturates() {
    Report r = new Report();
    r.throughput.add(
        new Results.Throughput(
            "relay polling->kafka mark",
            "",
            99_000,
            5,
            19_800,
            15_000,
            new Results.Footprint(6, 4, 0.404, 230, 0.31)));

    Curve.Point p = Curve.Point.of(100_000, "abcp2", r, 0.9);

    assertThat(p.ackP99()).isNull();
    assertThat(p.achieved()).isNull();
    // The drain's idle share, not the whole point's (backlog load included).
    assertThat(p.machineIdleShare()).isEqualTo(0.31);
    assertThat(p.saturation()).isNull();
    StringWriter table = new StringWriter();
    Curve.print(new PrintWriter(table), "backlog", "polling->kafka mark", List.of(p));
    assertThat(table.toString()).contains("100000", "19800", "0.404", "230 MiB", "31");
    assertThat(Curve.svg("backlog", "polling->kafka mark", "sub", List.of(p)))
        .contains("relay drain", "relay CPU (drain)", "backlog, events (log scale)");
  }

  @Test
  void theRatePlotMarksWhereTheCurveSaturated() {
    Curve.Point kept =
        new Curve.Point(1000, "p1", null, null, null, 1000.0, 10L, 5.0, 30.0, 40.0, 3.0, 0.4, null);
    Curve.Point saturated =
        new Curve.Point(
            5000, "p2", null, null, null, 1482.0, 10L, 9.0, 90.0, 99.0, 4.0, 0.1, "writers");
    String svg = Curve.svg("rate", "polling->kafka mark", "sub", List.of(kept, saturated));
    assertThat(svg)
        .contains(
            "relay commit-to-ack p50",
            "relay commit-to-ack p99",
            "bare producer send-to-ack p99",
            "saturated at 5k/s");
  }
}
