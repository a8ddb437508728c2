package io.outbox.relay.spi.support;

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
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The verdict collector of one batch on its way to a broker: exactly one verdict per event, from
 * whichever comes first (the broker's ack on the client's thread, the sender, the timer of {@link
 * BatchPublisher}); later ones are ignored. Once an event failed with a retryable or unavailable
 * verdict, its key's later events of the batch must not be sent: {@link #holdBehind} answers them
 * {@link Verdict#heldBehind}. Thread-safe.
 */
public final class PendingBatch {

  private final List<RoutedEvent> events;
  private final AtomicReferenceArray<Verdict> verdicts;
  private final AtomicInteger missing;
  private final long deadlineNanos;
  private final Function<RoutedEvent, String> where;
  private final Consumer<PendingBatch> onAllVerdicts;
  private final CompletableFuture<List<Verdict>> result = new CompletableFuture<>();
  private final Map<AggregateKey, Verdict> failedKeys = new ConcurrentHashMap<>();
  private final NavigableSet<Integer> resend = new ConcurrentSkipListSet<>();
  private final ReentrantLock sending = new ReentrantLock();
  private volatile Future<?> timer;

  /**
   * @param events the batch
   * @param deadlineNanos {@link System#nanoTime()} by which every event must have its verdict
   * @param where names an event's destination in messages, e.g. {@code subject 'orders.created'}
   * @param onAllVerdicts called once, on the thread that gave the last verdict
   */
  public PendingBatch(
      List<RoutedEvent> events,
      long deadlineNanos,
      Function<RoutedEvent, String> where,
      Consumer<PendingBatch> onAllVerdicts) {
    this.events = List.copyOf(events);
    this.verdicts = new AtomicReferenceArray<>(events.size());
    this.missing = new AtomicInteger(events.size());
    this.deadlineNanos = deadlineNanos;
    this.where = where;
    this.onAllVerdicts = onAllVerdicts;
  }

  /** The batch, in the order the verdicts must keep. */
  public List<RoutedEvent> events() {
    return events;
  }

  /** {@link System#nanoTime()} by which every event must have its verdict. */
  public long deadlineNanos() {
    return deadlineNanos;
  }

  /** Whether the deadline has passed. */
  public boolean expired() {
    return System.nanoTime() - deadlineNanos > 0;
  }

  /** Completed with every verdict, in batch order, never exceptionally. */
  public CompletableFuture<List<Verdict>> result() {
    return result;
  }

  /**
   * Records the verdict of event {@code index} unless it has one already (the first one wins, so a
   * late ack after the timeout changes nothing).
   */
  public void complete(int index, Verdict verdict) {
    if (!verdicts.compareAndSet(index, null, verdict)) {
      return;
    }
    if (verdict.outcome() == Verdict.Outcome.RETRYABLE
        || verdict.outcome() == Verdict.Outcome.SINK_UNAVAILABLE) {
      failedKeys.putIfAbsent(events.get(index).event().key(), verdict);
    }
    if (missing.decrementAndGet() == 0) {
      Future<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
      onAllVerdicts.accept(this);
    }
  }

  /**
   * The retryable or unavailable verdict an earlier event of {@code index}'s key got, or {@code
   * null}.
   */
  public Verdict keyFailure(int index) {
    // Asked for every event sent; skips building the key in the usual case of no failure yet.
    return failedKeys.isEmpty() ? null : failedKeys.get(events.get(index).event().key());
  }

  /**
   * Whether event {@code index} must not be sent because an earlier event of its key failed; if so,
   * it got its held-behind verdict. Ask again after any wait (a verdict may have come).
   */
  public boolean holdBehind(int index) {
    Verdict failed = keyFailure(index);
    if (failed == null) {
      return false;
    }
    complete(index, Verdict.heldBehind(failed));
    return true;
  }

  /** The verdict of event {@code index}, or {@code null} while it has none. */
  public Verdict verdict(int index) {
    return verdicts.get(index);
  }

  /** Whether every event has its verdict. */
  public boolean isDone() {
    return missing.get() == 0;
  }

  /** A sink-unavailable verdict for event {@code index}, naming its destination. */
  public Verdict unavailable(int index, String reason) {
    return Verdict.unavailable(where.apply(events.get(index)) + ": " + reason);
  }

  /** Gives the events {@code indexes[from..]} without a verdict yet {@code verdict}. */
  public void failFrom(List<Integer> indexes, int from, Verdict verdict) {
    for (int m = from; m < indexes.size(); m++) {
      complete(indexes.get(m), verdict);
    }
  }

  /** Gives the events {@code from..} without a verdict yet {@code verdict}. */
  public void failFrom(int from, Verdict verdict) {
    for (int i = from; i < events.size(); i++) {
      complete(i, verdict);
    }
  }

  /** Gives every event without a verdict yet a sink-unavailable one, naming its destination. */
  public void expire(String reason) {
    for (int i = 0; i < events.size(); i++) {
      if (verdicts.get(i) == null) {
        complete(i, unavailable(i, reason));
      }
    }
  }

  /**
   * Asks for event {@code index} to be sent again (its connection or channel died before the broker
   * answered, and the broker dropped it unseen).
   */
  public void resendLater(int index) {
    if (verdicts.get(index) == null) {
      resend.add(index);
    }
  }

  /** Takes the events waiting to be sent again, in batch order. */
  public List<Integer> takeResends() {
    List<Integer> out = new ArrayList<>();
    Integer i;
    while ((i = resend.pollFirst()) != null) {
      if (verdicts.get(i) == null) {
        out.add(i);
      }
    }
    return out;
  }

  /** Held while events of this batch are handed to the broker, so that resends keep their order. */
  public ReentrantLock sending() {
    return sending;
  }

  /** Every verdict, in batch order; only once {@link #isDone()}. */
  public List<Verdict> verdicts() {
    List<Verdict> out = new ArrayList<>(events.size());
    for (int i = 0; i < events.size(); i++) {
      out.add(verdicts.get(i));
    }
    return List.copyOf(out);
  }

  /**
   * Completes {@link #result} with every verdict on {@code executor}, off the client's thread that
   * gave the last verdict (whatever the caller chains must not stall the client), or on this thread
   * if {@code executor} refuses (shut down). Only once {@link #isDone()}.
   *
   * @return the verdicts, in batch order
   */
  public List<Verdict> completeOn(Executor executor) {
    List<Verdict> out = verdicts();
    try {
      executor.execute(() -> result.complete(out));
    } catch (RejectedExecutionException e) {
      result.complete(out);
    }
    return out;
  }

  /**
   * The timer that expires this batch ({@link BatchPublisher} sets it; a sink that sends on its own
   * threads sets its own); cancelled once every verdict arrived.
   */
  public void timer(Future<?> t) {
    this.timer = t;
    if (isDone()) {
      t.cancel(false);
    }
  }
}
