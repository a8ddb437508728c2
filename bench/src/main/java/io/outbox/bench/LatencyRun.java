package io.outbox.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.HdrHistogram.Histogram;

/**
 * The latency measurement, with the relay running: writers commit events at a fixed total rate, a
 * consumer notes when each arrives, and the relay's {@code published_at} marks (set right after the
 * broker's acknowledgement, {@code clock_timestamp()} of the settling statement) give the
 * commit-to-ack side.
 */
final class LatencyRun {
  /** How long the last events may take to arrive before they are counted as missing. */
  static final Duration SETTLE = Duration.ofSeconds(60);

  private LatencyRun() {}

  /**
   * What a latency run measured.
   *
   * @param latencies commit-to-receive and (with {@code mark}) commit-to-ack
   * @param achieved events/s the writers committed (the rate asked for, or less)
   * @param pendingAtEnd events still pending when the writers stopped: about the rate times the
   *     latency while the relay keeps up, a growing backlog when it does not
   */
  record Outcome(List<Results.Latency> latencies, double achieved, long pendingAtEnd) {}

  /**
   * Runs writers at {@code rate} events/s for {@code warmUp}, calls {@code measuring} and goes on
   * writing, on the same writers without a pause, for {@code duration}; returns commit-to-receive
   * and (with {@code mark}) commit-to-mark distributions of the events of that second part; adds to
   * {@code notes} when the writers fell short of the rate.
   */
  static Outcome run(
      BenchDatabase db,
      Workload workload,
      Brokers brokers,
      String sink,
      boolean mark,
      int writers,
      int rate,
      Duration warmUp,
      Writers.Start measuring,
      Duration duration,
      ChildJvm relay,
      List<String> notes,
      Path dump)
      throws Exception {
    try (Receiver receiver = Receiver.start(sink, brokers)) {
      // Unmeasured, at the same rate: connections, the receiver's, and the relay's JIT
      // compilation (a minute or two of a compiler core on a young JVM) stay out of the figures.
      Writers.Outcome o = Writers.run(db, workload, writers, rate, warmUp, measuring, duration);
      long pendingAtEnd;
      try (Connection c = db.connect()) {
        pendingAtEnd = db.pending(c);
      }
      Map<UUID, Writers.Commit> commits = o.commits();
      long deadline = System.nanoTime() + SETTLE.toNanos();
      while (missing(commits, receiver) > 0 && System.nanoTime() < deadline) {
        relay.checkAlive();
        Thread.sleep(50);
      }
      Histogram receive = new Histogram(3);
      for (Map.Entry<UUID, Writers.Commit> e : commits.entrySet()) {
        Long seen = receiver.firstSeenNanos(e.getKey());
        if (seen != null) {
          receive.recordValue(Math.max(0, (seen - e.getValue().nanos()) / 1000));
        }
      }
      double achieved = commits.size() / (o.nanos() / 1e9);
      if (achieved < 0.9 * rate) {
        notes.add(
            String.format(
                "latency run: the writers reached %.0f of the %d events/s requested; add --writers",
                achieved, rate));
      }
      String how =
          rate
              + " events/s requested ("
              + Math.round(achieved)
              + " achieved) by "
              + writers
              + " writers, one event per transaction, for "
              + duration.toSeconds()
              + " s: ";
      List<Results.Latency> result = new ArrayList<>();
      result.add(
          Results.Latency.of(
              "commit-to-consumer-receive",
              how
                  + "from the writer's commit() returning to the bench consumer receiving the"
                  + " event (Kafka consumer, fetch.max.wait.ms=5 / RabbitMQ consumer)",
              receive,
              missing(commits, receiver)));
      // The consumer may see an event before the relay's settling statement that sets its
      // published_at commits (it runs right after the broker's acknowledgement): wait for those
      // too.
      Map<UUID, Long> published =
          mark ? db.publishedAtMicros(new ArrayList<>(commits.keySet())) : Map.of();
      while (mark && published.size() < commits.size() && System.nanoTime() < deadline) {
        relay.checkAlive();
        Thread.sleep(50);
        published = db.publishedAtMicros(new ArrayList<>(commits.keySet()));
      }
      if (dump != null) {
        dump(dump, commits, receiver, published);
      }
      if (mark) {
        Histogram ack = new Histogram(3);
        for (Map.Entry<UUID, Long> e : published.entrySet()) {
          ack.recordValue(Math.max(0, e.getValue() - commits.get(e.getKey()).epochMicros()));
        }
        result.add(
            Results.Latency.of(
                "commit-to-ack (published_at)",
                how
                    + "from commit() returning to the row's published_at, which the relay sets"
                    + " with clock_timestamp() in the settling statement right after the broker"
                    + " acknowledged: an upper bound of commit-to-broker-ack",
                ack,
                commits.size() - published.size()));
      }
      return new Outcome(result, achieved, pendingAtEnd);
    }
  }

  /**
   * Writes one line per measured event, in commit order: the commit's wall-clock time (microseconds
   * since the epoch), commit-to-receive and commit-to-ack in microseconds, -1 for an event not
   * received or without a {@code published_at}.
   */
  private static void dump(
      Path file, Map<UUID, Writers.Commit> commits, Receiver receiver, Map<UUID, Long> published)
      throws IOException {
    List<Map.Entry<UUID, Writers.Commit>> inOrder = new ArrayList<>(commits.entrySet());
    inOrder.sort(Comparator.comparingLong(e -> e.getValue().epochMicros()));
    StringBuilder lines =
        new StringBuilder("# commit_epoch_micros commit_to_receive_micros commit_to_ack_micros\n");
    for (Map.Entry<UUID, Writers.Commit> e : inOrder) {
      Writers.Commit commit = e.getValue();
      Long seen = receiver.firstSeenNanos(e.getKey());
      Long acked = published.get(e.getKey());
      lines
          .append(commit.epochMicros())
          .append(' ')
          .append(seen == null ? -1 : Math.max(0, (seen - commit.nanos()) / 1000))
          .append(' ')
          .append(acked == null ? -1 : Math.max(0, acked - commit.epochMicros()))
          .append('\n');
    }
    Files.writeString(file, lines);
  }

  private static long missing(Map<UUID, Writers.Commit> commits, Receiver receiver) {
    return commits.keySet().stream().filter(id -> receiver.firstSeenNanos(id) == null).count();
  }
}
