package io.outbox.source.cdc.stream;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.Ticker;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * What the parts of one {@link ChangeStream} share, guarded by its one lock: the lanes, the events
 * in memory by row id, the watermark and the counts the catch-up and the diagnostics read. Every
 * field is read and written with {@link #lock} held (taken by {@link #run}, {@link #locked} and
 * {@link #interruptibly}); {@link #changed} wakes whoever waits for room, for events or for the
 * catch-up to end.
 */
final class StreamState {

  final String pipeline;
  final int laneBuffer;
  final Clock clock;
  final Ticker ticker;
  final ReentrantLock lock = new ReentrantLock();
  final Condition changed = lock.newCondition();
  final StreamLane[] lanes;
  final Watermark watermark = new Watermark();
  final Map<Long, ChangeStream.Item> inMemory = new HashMap<>();
  long parkedEvents; // events that left memory for a parked range, since the start
  boolean catchingUp; // streamed events wait until the catch-up is read
  int openCaughtUp; // caught-up events without a final verdict
  final CaughtUpIds caughtUpIds =
      new CaughtUpIds(); // what the catch-up handed, until streamed past
  Instant caughtUpReadAt; // database time once the catch-up was read, until the stream passed it
  Instant streamTime; // the database time up to which the stream has delivered everything
  long staleSkipped; // streamed INSERTs of final caught-up rows, kept from the lanes
  long staleInLanes; // streamed events a claim found final already (sent before, or by a copy)
  boolean closed;

  StreamState(int lanes, int laneBuffer, Clock clock, Ticker ticker, String pipeline) {
    this.pipeline = pipeline;
    this.laneBuffer = laneBuffer;
    this.clock = clock;
    this.ticker = ticker;
    this.lanes = new StreamLane[lanes];
    for (int i = 0; i < lanes; i++) {
      this.lanes[i] = new StreamLane(i);
    }
  }

  /** The lane of {@code key}. */
  StreamLane laneOf(AggregateKey key) {
    return lanes[key.lane(lanes.length)];
  }

  /** An event with a final verdict leaves memory and frees its position. */
  void finish(ChangeStream.Item item) {
    inMemory.remove(item.event.id());
    if (item.position != null) {
      watermark.release(item.position);
    }
    if (item.caughtUp) {
      openCaughtUp--;
    }
  }

  /** An action under the lock that may wait on {@link #changed}. */
  interface Waiting<T> {
    T get() throws InterruptedException;
  }

  /** Runs {@code action} with the lock held, taken interruptibly: it may wait. */
  <T> T interruptibly(Waiting<T> action) throws InterruptedException {
    lock.lockInterruptibly();
    try {
      return action.get();
    } finally {
      lock.unlock();
    }
  }

  /** Runs {@code action} with the lock held. */
  void run(Runnable action) {
    lock.lock();
    try {
      action.run();
    } finally {
      lock.unlock();
    }
  }

  /** Reads {@code action}'s result with the lock held. */
  <T> T locked(Supplier<T> action) {
    lock.lock();
    try {
      return action.get();
    } finally {
      lock.unlock();
    }
  }
}
