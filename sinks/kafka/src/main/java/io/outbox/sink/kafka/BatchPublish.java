package io.outbox.sink.kafka;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;

/**
 * One batch being published: collects exactly one verdict per event, from producer callbacks (any
 * thread) or from the sender, and reports when the last one arrived. The first verdict of an event
 * wins, so a late acknowledgement after the send-timeout expired changes nothing.
 */
final class BatchPublish {

  private final List<RoutedEvent> events;
  private final AtomicReferenceArray<Verdict> verdicts;
  private final AtomicInteger missing;
  private final CompletableFuture<List<Verdict>> result = new CompletableFuture<>();
  private final Consumer<BatchPublish> onAllVerdicts;
  private volatile Future<?> timeout;

  /**
   * @param events the batch
   * @param onAllVerdicts called once, on the thread that delivered the last verdict
   */
  BatchPublish(List<RoutedEvent> events, Consumer<BatchPublish> onAllVerdicts) {
    this.events = List.copyOf(events);
    this.verdicts = new AtomicReferenceArray<>(events.size());
    this.missing = new AtomicInteger(events.size());
    this.onAllVerdicts = onAllVerdicts;
  }

  List<RoutedEvent> events() {
    return events;
  }

  /** Completed with the verdicts by the sink, never exceptionally. */
  CompletableFuture<List<Verdict>> result() {
    return result;
  }

  /** Records the verdict of event {@code index} unless it has one; {@code true} if it was set. */
  boolean complete(int index, Verdict verdict) {
    if (!verdicts.compareAndSet(index, null, verdict)) {
      return false;
    }
    if (missing.decrementAndGet() == 0) {
      Future<?> t = timeout;
      if (t != null) {
        t.cancel(false);
      }
      onAllVerdicts.accept(this);
    }
    return true;
  }

  /** The verdict of event {@code index}, or {@code null} while it has none. */
  Verdict verdict(int index) {
    return verdicts.get(index);
  }

  /** Gives every event still without a verdict a sink-unavailable one. */
  void expire(String reason) {
    for (int i = 0; i < events.size(); i++) {
      if (verdicts.get(i) == null) {
        complete(i, Verdict.unavailable("topic '" + events.get(i).destination() + "': " + reason));
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
