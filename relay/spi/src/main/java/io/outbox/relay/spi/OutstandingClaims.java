package io.outbox.relay.spi;

import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * A source's record of which lanes have a claim outstanding: enforces "at most one claim per lane"
 * (see {@link Source}) and lets {@code close} wait for claims in flight to end.
 */
public final class OutstandingClaims {

  private final AtomicIntegerArray outstanding;
  private final String pipeline;

  /** For {@code lanes} lanes of {@code pipeline} (named in messages). */
  public OutstandingClaims(int lanes, String pipeline) {
    this.outstanding = new AtomicIntegerArray(lanes);
    this.pipeline = pipeline;
  }

  /**
   * Marks the lane's claim as begun.
   *
   * @throws IllegalStateException when the lane already has one
   */
  public void begin(int lane) {
    if (!outstanding.compareAndSet(lane, 0, 1)) {
      throw new IllegalStateException(
          "pipeline " + pipeline + " lane " + lane + " already has a claim outstanding");
    }
  }

  /** Marks the lane's claim as ended; call exactly once per {@link #begin}. */
  public void end(int lane) {
    outstanding.set(lane, 0);
    synchronized (outstanding) {
      outstanding.notifyAll();
    }
  }

  /**
   * Waits until no lane has a claim, at most until {@code deadlineNanos} ({@link System#nanoTime}).
   *
   * @return {@code true} when none is left, {@code false} on time-out or interrupt (the interrupt
   *     flag is kept)
   */
  public boolean awaitNone(long deadlineNanos) {
    synchronized (outstanding) {
      while (any()) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        try {
          outstanding.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return true;
    }
  }

  private boolean any() {
    for (int i = 0; i < outstanding.length(); i++) {
      if (outstanding.get(i) != 0) {
        return true;
      }
    }
    return false;
  }
}
