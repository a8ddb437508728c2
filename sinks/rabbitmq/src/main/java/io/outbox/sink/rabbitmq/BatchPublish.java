package io.outbox.sink.rabbitmq;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * One batch being published: collects exactly one verdict per event, from confirms, returns and
 * channel closures (the connection's thread) or from the sender, and reports when the last one
 * arrived. The first verdict of an event wins, so a late confirm after the confirm-timeout changes
 * nothing. Events whose channel died before their confirm wait, in order, to be sent again.
 */
final class BatchPublish {

  private final List<RoutedEvent> events;
  private final AtomicReferenceArray<Verdict> verdicts;
  private final AtomicInteger missing;
  private final CompletableFuture<List<Verdict>> result = new CompletableFuture<>();
  private final Consumer<BatchPublish> onAllVerdicts;
  private final long deadlineNanos;
  private final NavigableSet<Integer> resend = new ConcurrentSkipListSet<>();
  private final Map<AggregateKey, Verdict> failedKeys = new ConcurrentHashMap<>();
  private final ReentrantLock sending = new ReentrantLock();
  private volatile Future<?> timeout;

  /**
   * @param events the batch
   * @param deadlineNanos {@link System#nanoTime()} by which every event must have its verdict
   * @param onAllVerdicts called once, on the thread that delivered the last verdict
   */
  BatchPublish(List<RoutedEvent> events, long deadlineNanos, Consumer<BatchPublish> onAllVerdicts) {
    this.events = List.copyOf(events);
    this.verdicts = new AtomicReferenceArray<>(events.size());
    this.missing = new AtomicInteger(events.size());
    this.deadlineNanos = deadlineNanos;
    this.onAllVerdicts = onAllVerdicts;
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

  /** Held while events of this batch are handed to a channel, so that resends keep their order. */
  ReentrantLock sending() {
    return sending;
  }

  /** Records the verdict of event {@code index} unless it has one. */
  void complete(int index, Verdict verdict) {
    if (!verdicts.compareAndSet(index, null, verdict)) {
      return;
    }
    if (verdict.outcome() == Verdict.Outcome.RETRYABLE
        || verdict.outcome() == Verdict.Outcome.SINK_UNAVAILABLE) {
      failedKeys.putIfAbsent(events.get(index).event().key(), verdict);
    }
    if (missing.decrementAndGet() == 0) {
      Future<?> t = timeout;
      if (t != null) {
        t.cancel(false);
      }
      onAllVerdicts.accept(this);
    }
  }

  /**
   * The retryable or unavailable verdict an earlier event of {@code index}'s key got, or {@code
   * null}; a later event of a failed key is not sent (the broker must not take it first).
   */
  Verdict keyFailure(int index) {
    // Asked for every event sent; skip building the key in the usual case of no failure yet.
    return failedKeys.isEmpty() ? null : failedKeys.get(events.get(index).event().key());
  }

  /** Asks for event {@code index} to be sent again (its channel died before its confirm). */
  void resendLater(int index) {
    if (verdicts.get(index) == null) {
      resend.add(index);
    }
  }

  /** Takes the events waiting to be sent again, in batch order. */
  List<Integer> takeResends() {
    List<Integer> out = new ArrayList<>();
    Integer i;
    while ((i = resend.pollFirst()) != null) {
      if (verdicts.get(i) == null) {
        out.add(i);
      }
    }
    return out;
  }

  /** The verdict of event {@code index}, or {@code null} while it has none. */
  Verdict verdict(int index) {
    return verdicts.get(index);
  }

  /** Gives every event still without a verdict a sink-unavailable one. */
  void expire(String reason) {
    for (int i = 0; i < events.size(); i++) {
      if (verdicts.get(i) == null) {
        complete(
            i, Verdict.unavailable("exchange '" + events.get(i).destination() + "': " + reason));
      }
    }
  }

  /** Gives every event still without a verdict {@code verdict}. */
  void failUnanswered(Verdict verdict) {
    for (int i = 0; i < events.size(); i++) {
      if (verdicts.get(i) == null) {
        complete(i, verdict);
      }
    }
  }

  boolean isDone() {
    return missing.get() == 0;
  }

  /** The timer that expires this batch; cancelled once every verdict arrived. */
  void timeout(Future<?> timer) {
    this.timeout = timer;
    if (isDone()) {
      timer.cancel(false);
    }
  }

  /** Every verdict, in batch order; only once {@link #isDone()}. */
  List<Verdict> verdicts() {
    List<Verdict> out = new ArrayList<>(events.size());
    for (int i = 0; i < events.size(); i++) {
      out.add(verdicts.get(i));
    }
    return List.copyOf(out);
  }
}
