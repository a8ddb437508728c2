package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The small bench runs of the integration tests, and what they check of every report. */
final class BenchRuns {
  private BenchRuns() {}

  /**
   * A small run ({@code events}, 100 events/s for 2 s: at a load average of 30, 1 s of it committed
   * no event at all) with {@code extra}; asserts exit code 0.
   */
  static void smallRun(Path dir, Path json, StringWriter out, int events, String... extra) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--events",
                Integer.toString(events),
                "--keys",
                "50",
                "--rate",
                "100",
                "--duration",
                "2",
                "--skip-services",
                "--work-dir",
                dir.resolve("work").toString(),
                "--json",
                json.toString()));
    args.addAll(List.of(extra));
    StringWriter err = new StringWriter();
    long started = System.nanoTime();
    int exit =
        BenchMain.execute(new PrintWriter(out), new PrintWriter(err), args.toArray(String[]::new));
    System.out.printf(
        "bench %s took %d ms:%n%s%n",
        String.join(" ", extra), (System.nanoTime() - started) / 1_000_000, out);
    assertThat(exit).as("exit code; stderr: %s%nstdout: %s", err, out).isZero();
  }

  /** The latency figures' names; each counted something and missed nothing. */
  static List<String> latencies(JsonNode report) {
    List<String> names = new ArrayList<>();
    for (JsonNode l : report.get("latency")) {
      names.add(l.get("name").asText());
      assertThat(l.get("count").asLong()).as(l.toString()).isPositive();
      assertThat(l.get("missing").asLong()).as(l.toString()).isZero();
    }
    return names;
  }
}
