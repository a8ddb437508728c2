package io.outbox.source.cdc;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What one activation of the CDC source holds in memory: the streamed events, per lane, waiting to
 * be claimed (bounded: a full lane makes the engine wait), the events waiting for a retry (their
 * key is held back, other keys flow), and the watermark: the stream positions in order, each
 * committable once every event up to it has a final verdict (published or dead-lettered).
 *
 * <p>Positions are the engine's records of type {@code R}; final ones in a row collapse into the
 * latest, so memory grows with the events not yet final, not with the stream.
 *
 * @param <R> the engine's record type, handed back to its committer
 */
final class ChangeStream<R> {

  /** One event in memory, from the stream ({@code position} set) or from the sweep. */
  static final class Item {
    private OutboxEvent event;
    private final Position position;
    private final Instant notBefore;
    private Instant due; // while waiting for a retry

    Item(OutboxEvent event, Position position, Instant notBefore) {
      this.event = event;
      this.position = position;
      this.notBefore = notBefore;
    }

    OutboxEvent event() {
      return event;
    }
  }

  /** A stream position and how many of its events are not final yet. */
  static final class Position {
    private Object record;
    private int open;

    Position(Object record, int open) {
      this.record = record;
      this.open = open;
    }
  }

  private static final class Lane {
    final ArrayDeque<Item> queue = new ArrayDeque<>();
    final List<Item> retrying = new ArrayList<>();
    int streamed; // items of the queue that came from the stream (bounded by the lane buffer)
  }

  /** When an event whose retry the database says is not due yet is taken again at the soonest. */
  private static final Duration RECHECK = Duration.ofMillis(10);

  private final int lanes;
  private final int laneBuffer;
  private final Clock clock;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Lane[] state;
  private final ArrayDeque<Position> positions = new ArrayDeque<>();
  private final Set<Long> inMemory = new HashSet<>();
  private Object committable; // the latest position all of whose events are final
  private Instant streamTime;
  private boolean closed;

  ChangeStream(int lanes, int laneBuffer, Clock clock) {
    this.lanes = lanes;
    this.laneBuffer = laneBuffer;
    this.clock = clock;
    this.state = new Lane[lanes];
    for (int i = 0; i < lanes; i++) {
      state[i] = new Lane();
    }
  }

  /**
   * Takes one streamed INSERT; waits while its lane is full.
   *
   * @return {@code false} when the stream was closed meanwhile
   */
  boolean offer(R record, OutboxEvent event, Instant notBefore) throws InterruptedException {
    lock.lockInterruptibly();
    try {
      if (closed) {
        return false;
      }
      if (inMemory.contains(event.id())) {
        position(record, 0); // the sweep has it already
        advance();
        return !closed;
      }
      Lane lane = state[event.key().lane(lanes)];
      while (!closed && lane.streamed >= laneBuffer) {
        changed.await();
      }
      if (closed) {
        return false;
      }
      Item item = new Item(event, position(record, 1), notBefore);
      lane.queue.addLast(item);
      lane.streamed++;
      inMemory.add(event.id());
      changed.signalAll();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Takes a streamed record that is not an event (it only moves the position). */
  void pass(R record) {
    lock.lock();
    try {
      if (closed) {
        // A record dropped after close must not let a later position be committed past an event
        // that was never taken.
        return;
      }
      position(record, 0);
      advance();
    } finally {
      lock.unlock();
    }
  }

  /** Records how far the stream has come, from a heartbeat emitted at {@code emittedAt}. */
  void reached(Instant emittedAt) {
    lock.lock();
    try {
      if (streamTime == null || emittedAt.isAfter(streamTime)) {
        streamTime = emittedAt;
      }
    } finally {
      lock.unlock();
    }
  }

  /** The database time up to which the stream has delivered everything, or {@code null}. */
  Instant streamTime() {
    lock.lock();
    try {
      return streamTime;
    } finally {
      lock.unlock();
    }
  }

  /** Adds events the sweep found (not in memory already), ahead of the streamed ones. */
  int offerSwept(List<OutboxEvent> events) {
    lock.lock();
    try {
      List<OutboxEvent> sorted = new ArrayList<>(events);
      sorted.sort(Comparator.comparingLong(OutboxEvent::id).reversed());
      int added = 0;
      for (OutboxEvent e : sorted) {
        if (inMemory.add(e.id())) {
          state[e.key().lane(lanes)].queue.addFirst(new Item(e, null, null));
          added++;
        }
      }
      if (added > 0) {
        changed.signalAll();
      }
      return added;
    } finally {
      lock.unlock();
    }
  }

  /** Whether the event with this row id is buffered, claimed or waiting for a retry. */
  boolean holds(long id) {
    lock.lock();
    try {
      return inMemory.contains(id);
    } finally {
      lock.unlock();
    }
  }

  /**
   * The lane's next events: retries that are due first, then buffered events whose key is not held
   * back by a retry and whose {@code available_at} has passed; waits up to {@code maxWait}.
   */
  List<Item> take(int lane, int maxEvents, Duration maxWait) throws InterruptedException {
    long deadline = System.nanoTime() + Math.max(0, maxWait.toNanos());
    lock.lockInterruptibly();
    try {
      while (!closed) {
        Instant now = clock.instant();
        List<Item> batch = takeNow(state[lane], maxEvents, now);
        if (!batch.isEmpty()) {
          return batch;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        Instant next = nextDue(state[lane]);
        if (next != null) {
          long untilDue = Math.max(1_000_000, Duration.between(now, next).toNanos());
          left = Math.min(left, untilDue);
        }
        changed.await(left, TimeUnit.NANOSECONDS);
      }
      return List.of();
    } finally {
      lock.unlock();
    }
  }

  private List<Item> takeNow(Lane lane, int maxEvents, Instant now) {
    List<Item> batch = new ArrayList<>();
    Set<AggregateKey> held = new HashSet<>();
    lane.retrying.sort(Comparator.comparingLong(i -> i.event.id()));
    for (Iterator<Item> it = lane.retrying.iterator(); it.hasNext(); ) {
      Item item = it.next();
      if (batch.size() < maxEvents && !item.due.isAfter(now)) {
        it.remove();
        item.due = null;
        batch.add(item);
      } else {
        held.add(item.event.key());
      }
    }
    int fromStream = 0;
    for (Iterator<Item> it = lane.queue.iterator(); it.hasNext() && batch.size() < maxEvents; ) {
      Item item = it.next();
      if (held.contains(item.event.key())) {
        continue;
      }
      if (item.notBefore != null && item.notBefore.isAfter(now)) {
        continue; // delayed: not before available_at; like polling, it holds no key back
      }
      it.remove();
      batch.add(item);
      if (item.position != null) {
        fromStream++;
      }
    }
    if (fromStream > 0) {
      lane.streamed -= fromStream;
      changed.signalAll();
    }
    return batch;
  }

  private static Instant nextDue(Lane lane) {
    Instant next = null;
    for (Item item : lane.retrying) {
      next = next == null || item.due.isBefore(next) ? item.due : next;
    }
    for (Item item : lane.queue) {
      if (item.notBefore != null) {
        next = next == null || item.notBefore.isBefore(next) ? item.notBefore : next;
      }
    }
    return next;
  }

  /**
   * What the outbox holds for a taken event whose row is still unpublished.
   *
   * @param attempts the row's {@code attempts}
   * @param retryAt the row's {@code next_attempt_at} while it is still ahead on the database clock,
   *     else {@code null}
   */
  record Row(int attempts, Instant retryAt) {}

  /**
   * Brings a batch just taken from {@code lane} in line with its rows, read after the take: an
   * event whose row is not in {@code pending} was published, dead-lettered or deleted meanwhile (by
   * this pipeline before a restart streamed it again, or through the sweep's copy of it) and is
   * final without being sent again; an event whose row waits for a retry waits in memory until
   * {@code next_attempt_at}, holding its key back; the others carry the row's attempts. Later
   * events of a key held back go back to the front of the lane.
   *
   * @return the events to hand out, in the batch's order
   */
  List<Item> checked(int lane, List<Item> items, Map<Long, Row> pending) {
    lock.lock();
    try {
      Lane l = state[lane];
      Set<AggregateKey> held = new HashSet<>();
      List<Item> out = new ArrayList<>(items.size());
      List<Item> back = new ArrayList<>();
      boolean finished = false;
      Instant now = clock.instant();
      for (Item item : items) {
        Row row = pending.get(item.event.id());
        if (row == null) {
          finish(item);
          finished = true;
        } else if (held.contains(item.event.key())) {
          back.add(item);
        } else {
          if (row.attempts() != item.event.attempts()) {
            item.event = withAttempts(item.event, row.attempts());
          }
          if (row.retryAt() != null) {
            // Not due on the database's clock; this clock may be a few ms behind it: no busy loop.
            item.due = row.retryAt().isAfter(now) ? row.retryAt() : now.plus(RECHECK);
            l.retrying.add(item);
            held.add(item.event.key());
          } else {
            out.add(item);
          }
        }
      }
      putBack(l, back);
      if (finished) {
        advance();
      }
      if (out.size() < items.size()) {
        changed.signalAll();
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Applies the verdicts of a claim of {@code lane} whose durable part was written: final events
   * free their position, retries wait (holding their key back), the rest go back to the front.
   */
  void settled(int lane, List<Item> items, List<Settlement> settlements) {
    lock.lock();
    try {
      Map<Long, Settlement> byId = new HashMap<>();
      for (Settlement s : settlements) {
        byId.put(s.event().id(), s);
      }
      Lane l = state[lane];
      List<Item> back = new ArrayList<>();
      Instant now = clock.instant();
      for (Item item : items) {
        Settlement s = byId.get(item.event.id());
        if (s instanceof Settlement.Published || s instanceof Settlement.DeadLetter) {
          finish(item);
        } else if (s instanceof Settlement.Retry r) {
          item.event = withAttempts(item.event, r.attempts());
          item.due = now.plus(r.delay());
          l.retrying.add(item);
        } else {
          back.add(item);
        }
      }
      putBack(l, back);
      advance();
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Gives a claim's events back, unchanged: they are claimed again. */
  void released(int lane, List<Item> items) {
    lock.lock();
    try {
      putBack(state[lane], items);
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private void putBack(Lane lane, List<Item> items) {
    List<Item> sorted = new ArrayList<>(items);
    sorted.sort(Comparator.comparingLong((Item i) -> i.event.id()).reversed());
    for (Item item : sorted) {
      lane.queue.addFirst(item);
      if (item.position != null) {
        lane.streamed++;
      }
    }
  }

  private void finish(Item item) {
    inMemory.remove(item.event.id());
    if (item.position != null) {
      item.position.open--;
    }
  }

  private Position position(Object record, int open) {
    Position tail = positions.peekLast();
    if (open == 0 && tail != null && tail.open == 0) {
      tail.record = record; // final positions in a row: only the latest matters
      return tail;
    }
    Position p = new Position(record, open);
    positions.addLast(p);
    return p;
  }

  private void advance() {
    while (!positions.isEmpty() && positions.peekFirst().open == 0) {
      committable = positions.pollFirst().record;
    }
  }

  /**
   * The latest record up to which every event is final, once; {@code null} when there is nothing
   * new to commit.
   */
  @SuppressWarnings("unchecked")
  R takeCommittable() {
    lock.lock();
    try {
      Object r = committable;
      committable = null;
      return (R) r;
    } finally {
      lock.unlock();
    }
  }

  /** How many events are in memory (buffered, claimed or retrying). */
  int size() {
    lock.lock();
    try {
      return inMemory.size();
    } finally {
      lock.unlock();
    }
  }

  /** Wakes every waiter; offers and takes return at once from now on. */
  void close() {
    lock.lock();
    try {
      closed = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private static OutboxEvent withAttempts(OutboxEvent e, int attempts) {
    return new OutboxEvent(
        e.id(),
        e.eventId(),
        e.aggregateType(),
        e.aggregateId(),
        e.eventType(),
        e.destination(),
        e.payload(),
        e.payloadFormat(),
        e.headers(),
        e.createdAt(),
        attempts);
  }
}
