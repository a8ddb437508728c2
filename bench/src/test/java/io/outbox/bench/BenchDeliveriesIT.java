package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The harness's runs beside each other and from the change stream: both delivery modes side by side
 * with either source, and the CDC drain of a backlog the stream carries. Smoke tests as {@link
 * BenchIT}'s: nothing asserted of a figure beyond "counted and positive".
 */
class BenchDeliveriesIT {

  @TempDir Path dir;

  /**
   * With {@code --source cdc} each mode's relay streams from a slot of its own: the second one
   * starts on a new slot, which its predecessor's stored offsets would make it refuse.
   */
  @ParameterizedTest
  @ValueSource(strings = {"polling", "cdc"})
  void bothDeliveriesRunSideBySideAndReportTheirRatio(String source) throws Exception {
    Path json = dir.resolve("bench.json");
    StringWriter out = new StringWriter();
    BenchRuns.smallRun(
        dir, json, out, 500, "--source", source, "--baselines", "none", "--delivery", "both");

    JsonNode report = new ObjectMapper().readTree(json.toFile());
    List<String> names = new ArrayList<>();
    report.get("throughput").forEach(t -> names.add(t.get("name").asText()));
    assertThat(names)
        .containsExactly(
            "relay " + source + "->kafka mark at-least-once",
            "relay " + source + "->kafka mark exactly-once");
    for (JsonNode t : report.get("throughput")) {
      assertThat(t.get("events").asLong()).as(t.toString()).isBetween(1L, 500L);
    }
    assertThat(BenchRuns.latencies(report))
        .containsExactly(
            "commit-to-consumer-receive at-least-once",
            "commit-to-ack (published_at) at-least-once",
            "commit-to-consumer-receive exactly-once",
            "commit-to-ack (published_at) exactly-once");
    assertThat(report.at("/ratios/exactly-once ~1 at-least-once (drain)").asDouble()).isPositive();
    // A CDC relay's latency run starts once its stream has passed the backlog; how long that took
    // after the drain is a figure of its own.
    JsonNode catchUps = report.get("streamCatchUps");
    assertThat(catchUps).hasSize(source.equals("cdc") ? 2 : 0);
    for (JsonNode c : catchUps) {
      assertThat(c.get("timedOut").asBoolean()).as(c.toString()).isFalse();
      assertThat(c.get("seconds").asDouble()).as(c.toString()).isBetween(0.0, 120.0);
    }
    assertThat(report.at("/settings/relay exit code at-least-once").asInt()).isZero();
    assertThat(report.at("/settings/relay exit code exactly-once").asInt()).isZero();
    // Each mode's relay had its own config; only the exactly-once one used transactions.
    assertThat(Files.readString(dir.resolve("work/exactly-once/relay.conf")))
        .contains(
            "source.type = " + source,
            "sink.kafka.delivery = exactly-once",
            "sink.kafka.ledger.topic");
    assertThat(Files.readString(dir.resolve("work/at-least-once/relay.conf")))
        .contains("sink.kafka.delivery = at-least-once");
    assertThat(Files.readString(dir.resolve("work/exactly-once/relay.log")))
        .contains("transactional producer")
        .doesNotContain("ERROR");
    assertThat(out.toString()).contains("commit-to-ack p99 at the run's rate (issue #14)");
  }

  /**
   * {@code --cdc-backlog streamed}: the relay streams before the backlog exists, so its activation
   * reads nothing from the table and the change stream carries every row; the report gives the
   * insertion beside the drain, and the latency run follows as usual.
   */
  @Test
  void streamedCdcDrainIsTheChangeStream() throws Exception {
    Path json = dir.resolve("bench.json");
    StringWriter out = new StringWriter();
    BenchRuns.smallRun(
        dir, json, out, 500, "--source", "cdc", "--cdc-backlog", "streamed", "--baselines", "none");

    JsonNode report = new ObjectMapper().readTree(json.toFile());
    assertThat(report.get("throughput").size()).isEqualTo(1);
    JsonNode drain = report.get("throughput").get(0);
    assertThat(drain.get("name").asText()).isEqualTo("relay cdc->kafka mark");
    assertThat(drain.get("events").asLong()).as(drain.toString()).isBetween(1L, 500L);
    assertThat(drain.get("eventsPerSecond").asDouble()).as(drain.toString()).isPositive();
    assertThat(drain.get("measures").asText()).contains("--cdc-backlog streamed");
    assertThat(drain.at("/footprint/peakRssMiB").asDouble()).isPositive();
    JsonNode streamed = report.at("/streamed/relay cdc->kafka mark");
    assertThat(streamed.isMissingNode()).as(report.toString()).isFalse();
    assertThat(streamed.get("insertSeconds").asDouble()).isPositive();
    assertThat(streamed.get("insertEventsPerSecond").asDouble()).isPositive();
    assertThat(streamed.get("drainEndAfterInsertSeconds").asDouble()).isNotNegative();
    assertThat(streamed.get("insertBound").isBoolean()).isTrue();
    assertThat(report.at("/settings/cdc backlog").asText()).startsWith("streamed");
    assertThat(report.at("/settings/relay exit code").asInt()).isZero();
    assertThat(BenchRuns.latencies(report))
        .containsExactly("commit-to-consumer-receive", "commit-to-ack (published_at)");
    // The catch-up found the table empty: no row reached the relay but through the stream.
    assertThat(Files.readString(dir.resolve("work/relay.log")))
        .contains("is now the active one for slot")
        .doesNotContain("unpublished row(s)")
        .doesNotContain("ERROR");
    assertThat(out.toString()).contains("streamed CDC backlog", "backlog inserted in");
  }
}
