package io.outbox.relay.spi.support;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The verdict collector of one batch on its way to a broker, and the one place that decides which
 * of its events may be sent, and when (docs/design.md, per-key order):
 *
 * <ul>
 *   <li>Exactly one verdict per event, from whichever comes first (the broker's ack on the client's
 *       thread, the sender, the timer of {@link BatchPublisher}); later ones are ignored.
 *   <li>A key has at most one event at the broker without a verdict: its next event of the batch
 *       takes its {@linkplain #nextTurn turn} once the one before was published or failed for good
 *       (permanent). A broker answers each message on its own (a RabbitMQ nack, a NATS stream full
 *       now, a Redis error reply) and may take a later message after refusing an earlier one; sent
 *       one at a time, a key's events cannot overtake each other there. Different keys go out
 *       together.
 *   <li>Once an event failed with a retryable or unavailable verdict, every later event of its key
 *       in the batch is {@linkplain Verdict#heldBehind held behind} it at once, sent or not (a sink
 *       that sends ahead of turns, as the Kafka producer's ordered partitions allow, then settles
 *       none of them as published before the failed one).
 * </ul>
 *
 * Thread-safe.
 */
public final class PendingBatch {

  private final List<RoutedEvent> events;
  private final AtomicReferenceArray<Verdict> verdicts;
  private final AtomicInteger missing;
  private final Deadline deadline;
  private final Function<RoutedEvent, String> where;
  private final Consumer<PendingBatch> onAllVerdicts;
  private final CompletableFuture<List<Verdict>> result = new CompletableFuture<>();

  /**
   * Whether senders take turns ({@link #nextTurn}); else the sink sends the whole batch at once.
   */
  private final boolean turns;

  /**
   * Per event, the position of its key's next event in the batch, or -1. With turns, from the
   * start; without, made by the first verdict that holds back a key (a batch all published never
   * hashes a key).
   */
  private volatile int[] nextOfKey;

  private final ReentrantLock turnLock = new ReentrantLock();
  private final Condition turnsChanged = turnLock.newCondition();

  /** Events whose turn it is and that no sender took yet; guarded by {@link #turnLock}. */
  private final NavigableSet<Integer> ready = new TreeSet<>();

  private volatile Future<?> timer;

  /**
   * A batch whose events a sender takes turn by turn ({@link #nextTurn}).
   *
   * @param events the batch
   * @param deadline by when every event must have its verdict
   * @param where names an event's destination in messages, e.g. {@code subject 'orders.created'}
   * @param onAllVerdicts called once, on the thread that gave the last verdict
   */
  public PendingBatch(
      List<RoutedEvent> events,
      Deadline deadline,
      Function<RoutedEvent, String> where,
      Consumer<PendingBatch> onAllVerdicts) {
    this(events, deadline, where, onAllVerdicts, true);
  }

  /**
   * A batch the sink sends whole, without turns, because its broker keeps a key's events in order
   * while they are in flight (Kafka: one partition, an idempotent producer); a failed event still
   * holds its key's later events behind it.
   */
  public static PendingBatch withoutTurns(
      List<RoutedEvent> events,
      Deadline deadline,
      Function<RoutedEvent, String> where,
      Consumer<PendingBatch> onAllVerdicts) {
    return new PendingBatch(events, deadline, where, onAllVerdicts, false);
  }

  private PendingBatch(
      List<RoutedEvent> events,
      Deadline deadline,
      Function<RoutedEvent, String> where,
      Consumer<PendingBatch> onAllVerdicts,
      boolean turns) {
    this.events = List.copyOf(events);
    this.verdicts = new AtomicReferenceArray<>(events.size());
    this.missing = new AtomicInteger(events.size());
    this.deadline = deadline;
    this.where = where;
    this.onAllVerdicts = onAllVerdicts;
    this.turns = turns;
    if (turns) {
      this.nextOfKey = link(true);
    }
  }

  /**
   * Links each event to its key's next event of the batch; with {@code firstTurn}, each key's first
   * event takes the first turn.
   */
  private int[] link(boolean firstTurn) {
    int[] next = new int[events.size()];
    Map<AggregateKey, Integer> last = new HashMap<>();
    for (int i = 0; i < events.size(); i++) {
      next[i] = -1;
      Integer previous = last.put(events.get(i).event().key(), i);
      if (previous != null) {
        next[previous] = i;
      } else if (firstTurn) {
        ready.add(i);
      }
    }
    return next;
  }

  /** {@link #nextOfKey}, made now if it was not yet (a batch without turns). */
  private int[] nextOfKey() {
    int[] next = nextOfKey;
    if (next == null) {
      synchronized (this) {
        next = nextOfKey;
        if (next == null) {
          nextOfKey = next = link(false);
        }
      }
    }
    return next;
  }

  /** The batch, in the order the verdicts must keep. */
  public List<RoutedEvent> events() {
    return events;
  }

  /** By when every event must have its verdict. */
  public Deadline deadline() {
    return deadline;
  }

  /** Whether the deadline has passed. */
  public boolean expired() {
    return deadline.passed();
  }

  /** Completed with every verdict, in batch order, never exceptionally. */
  public CompletableFuture<List<Verdict>> result() {
    return result;
  }

  /**
   * The events to send now, in batch order: those whose turn came and that no sender took yet (each
   * key's first event of the batch; its next one once the one before was published or failed for
   * good; one {@linkplain #resendLater sent back}). Waits while none is, until every event has its
   * verdict or the deadline passed; then the answer is empty (the timer gives what is left its
   * verdict). The events returned are taken: send each, or give it a verdict.
   */
  public List<Integer> nextTurn() throws InterruptedException {
    if (!turns) {
      throw new IllegalStateException("a batch without turns is sent whole");
    }
    turnLock.lock();
    try {
      while (true) {
        List<Integer> out = new ArrayList<>(ready.size());
        Integer i;
        while ((i = ready.pollFirst()) != null) {
          if (verdicts.get(i) == null) {
            out.add(i);
          }
        }
        if (!out.isEmpty() || isDone()) {
          return out;
        }
        long left = deadline.nanosLeft();
        if (left <= 0) {
          return out;
        }
        turnsChanged.awaitNanos(left);
      }
    } finally {
      turnLock.unlock();
    }
  }

  /**
   * For a sink whose client may still send a key's later events on its own after giving up an
   * earlier one (Kafka's producer re-numbers a partition's later requests, already in flight, and
   * sends them again): runs {@code stopClient} if {@code failure} holds back its event's key, so
   * that the client is stopped before it sends a later event of that key. A failure that holds
   * nothing back (permanent: the event is dead-lettered) lets the client go on. Call it on the
   * client's own thread, before {@link #complete} records that failure.
   */
  public void beforeFailure(Verdict failure, Runnable stopClient) {
    if (failure.holdsBackItsKey()) {
      stopClient.run();
    }
  }

  /**
   * Records the verdict of event {@code index} unless it has one already (the first one wins, so a
   * late ack after the timeout changes nothing). A published or permanent verdict gives the turn to
   * the key's next event; a retryable or unavailable one holds back every later event of the key.
   */
  public void complete(int index, Verdict verdict) {
    if (!record(index, verdict)) {
      return;
    }
    if (verdict.holdsBackItsKey()) {
      Verdict behind = Verdict.heldBehind(verdict);
      int[] nextOf = nextOfKey();
      for (int next = nextOf[index]; next >= 0; next = nextOf[next]) {
        record(next, behind);
      }
    } else if (turns && nextOfKey[index] >= 0) {
      turn(nextOfKey[index]);
    }
    if (missing.get() == 0) {
      turnLock.lock();
      try {
        turnsChanged.signalAll(); // a sender waiting for a turn is done
      } finally {
        turnLock.unlock();
      }
    }
  }

  /** Sets one verdict if there was none; the last one ends the batch. */
  private boolean record(int index, Verdict verdict) {
    if (!verdicts.compareAndSet(index, null, verdict)) {
      return false;
    }
    if (missing.decrementAndGet() == 0) {
      Future<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
      onAllVerdicts.accept(this);
    }
    return true;
  }

  /** Makes it event {@code index}'s turn, waking a sender waiting for one. */
  private void turn(int index) {
    if (verdicts.get(index) != null) {
      return;
    }
    turnLock.lock();
    try {
      ready.add(index);
      turnsChanged.signalAll();
    } finally {
      turnLock.unlock();
    }
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
   * Gives event {@code index}, taken by a sender, its turn again: its connection or channel died
   * before the broker answered, and the broker dropped it unseen. The key's later events still wait
   * for its verdict.
   */
  public void resendLater(int index) {
    turn(index);
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
