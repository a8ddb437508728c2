package io.outbox.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The relay's own stage histograms ({@code outbox_relay_stage_seconds}, docs/metrics.md), scraped
 * from its {@code /metrics} before and after a run: the percentiles of each stage over the run,
 * interpolated within the histogram's buckets as Prometheus's {@code histogram_quantile} does; and
 * its {@code outbox_relay_active} gauge, which a streamed CDC drain waits for.
 */
final class StageMetrics {

  private static final Pattern BUCKET =
      Pattern.compile(
          "(?m)^outbox_relay_stage_seconds_bucket\\{[^}]*stage=\"(\\w+)\"[^}]*le=\"([^\"]+)\"[^}]*\\}"
              + " ([0-9.eE+-]+)$");
  private static final Pattern BUCKET_LE_FIRST =
      Pattern.compile(
          "(?m)^outbox_relay_stage_seconds_bucket\\{[^}]*le=\"([^\"]+)\"[^}]*stage=\"(\\w+)\"[^}]*\\}"
              + " ([0-9.eE+-]+)$");
  private static final Pattern HTTP_LINE = Pattern.compile("HTTP endpoints on ([^:\\s]+):(\\d+)");

  /**
   * One stage over a run.
   *
   * @param stage {@code wake}, {@code claim}, {@code publish} or {@code settle}
   * @param count observations (events for {@code wake}, batches otherwise)
   * @param p50 milliseconds
   * @param p99 milliseconds
   */
  record Stage(String stage, long count, double p50, double p99) {}

  /** Cumulative bucket counts by stage, then by upper bound in seconds. */
  record Snapshot(Map<String, TreeMap<Double, Double>> buckets) {}

  private final URI metrics;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private StageMetrics(URI metrics) {
    this.metrics = metrics;
  }

  /** The relay's metrics endpoint, found in its log; null when the log has no such line yet. */
  static StageMetrics fromLog(Path relayLog) throws IOException {
    Matcher m = HTTP_LINE.matcher(Files.readString(relayLog));
    if (!m.find()) {
      return null;
    }
    return new StageMetrics(URI.create("http://" + m.group(1) + ":" + m.group(2) + "/metrics"));
  }

  Snapshot scrape() throws IOException, InterruptedException {
    return parse(text());
  }

  /**
   * Whether the relay's gauge {@code outbox_relay_active} reads 1 for {@code pipeline}: its source
   * activated (for the CDC source: the slot checked, the catch-up's bound read, the engine started)
   * and its lanes are starting.
   */
  boolean active(String pipeline) throws IOException, InterruptedException {
    Matcher m =
        Pattern.compile(
                "(?m)^outbox_relay_active\\{[^}]*pipeline=\""
                    + Pattern.quote(pipeline)
                    + "\"[^}]*\\} ([0-9.eE+-]+)$")
            .matcher(text());
    return m.find() && Double.parseDouble(m.group(1)) == 1;
  }

  private String text() throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    return response.body();
  }

  static Snapshot parse(String text) {
    Map<String, TreeMap<Double, Double>> buckets = new TreeMap<>();
    for (Pattern p : List.of(BUCKET, BUCKET_LE_FIRST)) {
      Matcher m = p.matcher(text);
      boolean leFirst = p == BUCKET_LE_FIRST;
      while (m.find()) {
        String stage = m.group(leFirst ? 2 : 1);
        String le = m.group(leFirst ? 1 : 2);
        double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
        buckets
            .computeIfAbsent(stage, k -> new TreeMap<>())
            .put(bound, Double.parseDouble(m.group(3)));
      }
    }
    return new Snapshot(buckets);
  }

  /** Each stage's observations between two snapshots, with their percentiles. */
  static List<Stage> between(Snapshot before, Snapshot after) {
    List<Stage> stages = new ArrayList<>();
    for (String stage : List.of("wake", "claim", "publish", "settle")) {
      TreeMap<Double, Double> end = after.buckets().get(stage);
      if (end == null) {
        continue;
      }
      TreeMap<Double, Double> start = before.buckets().getOrDefault(stage, new TreeMap<>());
      TreeMap<Double, Double> delta = new TreeMap<>();
      end.forEach((le, n) -> delta.put(le, n - start.getOrDefault(le, 0.0)));
      double total = delta.lastEntry().getValue();
      if (total <= 0) {
        continue;
      }
      stages.add(
          new Stage(
              stage, Math.round(total), quantile(delta, 0.5) * 1000, quantile(delta, 0.99) * 1000));
    }
    return stages;
  }

  /**
   * The {@code q} quantile of cumulative buckets, linear within the bucket it falls in (0 as the
   * first bucket's lower bound); the highest finite bound when it falls in {@code +Inf}.
   */
  static double quantile(TreeMap<Double, Double> cumulative, double q) {
    double total = cumulative.lastEntry().getValue();
    double rank = q * total;
    double lower = 0;
    double below = 0;
    for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
      double upper = e.getKey();
      double count = e.getValue();
      if (count >= rank) {
        if (Double.isInfinite(upper)) {
          return lower;
        }
        double inBucket = count - below;
        return inBucket <= 0 ? upper : lower + (upper - lower) * (rank - below) / inBucket;
      }
      lower = upper;
      below = count;
    }
    return lower;
  }
}
