package io.outbox.relay.pipeline;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** A sink whose verdicts a test scripts; records what it "published". */
final class FakeSink implements Sink {
  final List<RoutedEvent> published = new CopyOnWriteArrayList<>();
  volatile Function<RoutedEvent, Verdict> verdicts = e -> Verdict.published();
  volatile String cloudEventsPrefix = "ce_";
  volatile boolean up = true;
  volatile long delayMillis;
  volatile boolean closed;

  /**
   * When set, a refused event does not fail its key's later events of the same call: like Kafka
   * appending the partition's next request after refusing one record of the request before.
   */
  volatile boolean independentRecords;

  /** When set, the next call waits for this future before it answers (and records). */
  volatile CompletableFuture<Void> stalled;

  @Override
  public CompletionStage<List<Verdict>> publish(List<RoutedEvent> batch) {
    CompletableFuture<Void> stall = stalled;
    stalled = null;
    return CompletableFuture.supplyAsync(
        () -> {
          if (stall != null) {
            stall.join();
          }
          sleep(delayMillis);
          List<Verdict> out = new ArrayList<>();
          java.util.Set<String> failedKeys = new java.util.HashSet<>();
          for (RoutedEvent e : batch) {
            // Like a Kafka partition: after a key's event failed, its later events fail too.
            Verdict v =
                !up
                    ? Verdict.unavailable("broker down")
                    : !independentRecords && failedKeys.contains(e.event().aggregateId())
                        ? Verdict.retryable("earlier event of the key failed")
                        : verdicts.apply(e);
            if (!v.isPublished()) {
              failedKeys.add(e.event().aggregateId());
            }
            if (v.isPublished()) {
              published.add(e);
            }
            out.add(v);
          }
          return out;
        });
  }

  @Override
  public boolean probe(Duration timeout) {
    return up;
  }

  @Override
  public void close(Duration timeout) {
    closed = true;
  }

  private static void sleep(long ms) {
    if (ms > 0) {
      try {
        Thread.sleep(ms);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public String cloudEventsHeaderPrefix() {
    return cloudEventsPrefix;
  }
}
