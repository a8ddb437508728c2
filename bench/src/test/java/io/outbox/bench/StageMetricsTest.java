package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class StageMetricsTest {

  private static String scrape(int under1ms, int under5ms, int over) {
    String p = "pipeline=\"bench\",stage=\"claim\"";
    return "# TYPE outbox_relay_stage_seconds histogram\n"
        + "outbox_relay_stage_seconds_bucket{"
        + p
        + ",le=\"0.001\"} "
        + under1ms
        + "\n"
        + "outbox_relay_stage_seconds_bucket{"
        + p
        + ",le=\"0.005\"} "
        + (under1ms + under5ms)
        + "\n"
        + "outbox_relay_stage_seconds_bucket{"
        + p
        + ",le=\"+Inf\"} "
        + (under1ms + under5ms + over)
        + "\n"
        + "outbox_relay_stage_seconds_count{"
        + p
        + "} "
        + (under1ms + under5ms + over)
        + "\n";
  }

  @Test
  void percentilesOfTheRunAreInterpolatedWithinTheBucketsOfItsOwnObservations() {
    StageMetrics.Snapshot before = StageMetrics.parse(scrape(1000, 0, 0));
    // During the run: 50 under 1 ms, 50 between 1 and 5 ms.
    StageMetrics.Snapshot after = StageMetrics.parse(scrape(1050, 50, 0));

    List<StageMetrics.Stage> stages = StageMetrics.between(before, after);

    assertThat(stages).hasSize(1);
    StageMetrics.Stage claim = stages.get(0);
    assertThat(claim.stage()).isEqualTo("claim");
    assertThat(claim.count()).isEqualTo(100);
    assertThat(claim.p50()).isCloseTo(1.0, within(1e-9));
    assertThat(claim.p99()).isCloseTo(1 + 4 * 49 / 50.0, within(1e-9));
  }

  @Test
  void aQuantileBeyondTheLastFiniteBucketIsThatBucketsBound() {
    TreeMap<Double, Double> cumulative = new TreeMap<>();
    cumulative.put(0.001, 10.0);
    cumulative.put(Double.POSITIVE_INFINITY, 100.0);
    assertThat(StageMetrics.quantile(cumulative, 0.99)).isEqualTo(0.001);
    assertThat(StageMetrics.quantile(cumulative, 0.05)).isCloseTo(0.0005, within(1e-12));
  }

  @Test
  void labelsInEitherOrderAreRead() {
    String text =
        "outbox_relay_stage_seconds_bucket{le=\"0.01\",pipeline=\"b\",stage=\"wake\"} 7\n";
    assertThat(StageMetrics.parse(text).buckets().get("wake")).containsEntry(0.01, 7.0);
  }
}
