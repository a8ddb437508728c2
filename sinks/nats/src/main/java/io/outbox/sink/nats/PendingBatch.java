package io.outbox.sink.nats;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * A batch on its way to JetStream: one verdict per event, from publish acks (the client's thread),
 * the sender or the timer, whichever comes first; calls back once the last one is in. An event of a
 * key whose earlier event failed is not sent ({@link #keyFailure}).
 */
final class PendingBatch {

  private final List<RoutedEvent> events;
  private final Verdict[] verdicts;
  private final long deadlineNanos;
  private final Consumer<PendingBatch> onDone;
  private final Map<AggregateKey, Verdict> failedKeys = new ConcurrentHashMap<>();
  private final CompletableFuture<List<Verdict>> result = new CompletableFuture<>();
  private int missing;
  private Future<?> timeout;

  /**
   * @param deadlineNanos {@link System#nanoTime()} by which every event must have its verdict
   * @param onDone called once, on the thread that gave the last verdict
   */
  PendingBatch(List<RoutedEvent> events, long deadlineNanos, Consumer<PendingBatch> onDone) {
    this.events = List.copyOf(events);
    this.verdicts = new Verdict[events.size()];
    this.missing = events.size();
    this.deadlineNanos = deadlineNanos;
    this.onDone = onDone;
  }

  List<RoutedEvent> events() {
    return events;
  }

  long deadlineNanos() {
    return deadlineNanos;
  }

  /** Completed with the verdicts by the sink, never exceptionally. */
  CompletableFuture<List<Verdict>> result() {
    return result;
  }

  /** Records event {@code index}'s verdict unless it has one already (the first one wins). */
  void complete(int index, Verdict verdict) {
    Future<?> timer;
    synchronized (this) {
      if (verdicts[index] != null) {
        return;
      }
      verdicts[index] = verdict;
      if (verdict.outcome() == Verdict.Outcome.RETRYABLE
          || verdict.outcome() == Verdict.Outcome.SINK_UNAVAILABLE) {
        failedKeys.putIfAbsent(events.get(index).event().key(), verdict);
      }
      if (--missing > 0) {
        return;
      }
      timer = timeout;
    }
    if (timer != null) {
      timer.cancel(false);
    }
    onDone.accept(this);
  }

  /** The failure of an earlier event of {@code index}'s key, or {@code null}. */
  Verdict keyFailure(int index) {
    return failedKeys.isEmpty() ? null : failedKeys.get(events.get(index).event().key());
  }

  synchronized Verdict verdict(int index) {
    return verdicts[index];
  }

  /** Gives events {@code from..} that have no verdict yet {@code verdict}. */
  void failFrom(int from, Verdict verdict) {
    for (int i = from; i < events.size(); i++) {
      complete(i, verdict);
    }
  }

  /** Gives every event without a verdict a sink-unavailable one. */
  void expire(String reason) {
    for (int i = 0; i < events.size(); i++) {
      complete(i, Verdict.unavailable("subject '" + events.get(i).destination() + "': " + reason));
    }
  }

  /** The timer that expires this batch; cancelled once every verdict is in. */
  void timeout(Future<?> timer) {
    boolean done;
    synchronized (this) {
      timeout = timer;
      done = missing == 0;
    }
    if (done) {
      timer.cancel(false);
    }
  }

  /** Every verdict, in batch order; once all are in. */
  synchronized List<Verdict> verdicts() {
    return List.copyOf(Arrays.asList(verdicts));
  }
}
