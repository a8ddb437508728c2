package io.outbox.source.postgres;

import io.outbox.relay.spi.Deadline;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.BooleanSupplier;

/**
 * A source's record of which lanes have a claim outstanding: enforces "at most one claim per lane,
 * plus one claimed ahead of it" (see {@link Source}) and lets {@code close} wait for claims in
 * flight to end.
 *
 * <p>It also counts the claim transactions a source holds open while their events are published
 * (the polling source's), and can pause them: while paused no new one opens ({@link
 * #openTransaction} says no, and the lanes find nothing), so that retention can take a partition's
 * exclusive lock once those open have ended ({@link #pauseTransactions}) instead of queueing behind
 * them, and every claim behind itself.
 */
public final class OutstandingClaims {

  private final AtomicIntegerArray outstanding;
  private final String pipeline;
  private int transactions; // guarded by outstanding
  private boolean paused; // guarded by outstanding
  private volatile Runnable resumed = () -> {};

  /** For {@code lanes} lanes of {@code pipeline} (named in messages). */
  public OutstandingClaims(int lanes, String pipeline) {
    this.outstanding = new AtomicIntegerArray(lanes);
    this.pipeline = pipeline;
  }

  /**
   * Checks the arguments of a claim ({@link Source#claim}, {@link Source#claimAhead}).
   *
   * @throws IllegalArgumentException when the lane is not in {@code [0, lanes)} or {@code
   *     maxEvents} is below 1
   */
  public void checkArguments(int lane, int maxEvents) {
    if (lane < 0 || lane >= outstanding.length()) {
      throw new IllegalArgumentException(
          "lane must be in [0, " + outstanding.length() + "), got " + lane);
    }
    if (maxEvents < 1) {
      throw new IllegalArgumentException("maxEvents must be at least 1, got " + maxEvents);
    }
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

  /**
   * Marks a claim made ahead of the lane's outstanding one ({@link Source#claimAhead}) as begun.
   *
   * @throws IllegalStateException when the lane has no claim outstanding, or already one ahead
   */
  public void beginAhead(int lane) {
    if (!outstanding.compareAndSet(lane, 1, 2)) {
      throw new IllegalStateException(
          "pipeline "
              + pipeline
              + " lane "
              + lane
              + (outstanding.get(lane) == 0
                  ? " has no claim outstanding to claim ahead of"
                  : " already has a claim made ahead"));
    }
  }

  /**
   * Marks one of the lane's claims as ended; call exactly once per {@link #begin}/{@link
   * #beginAhead}.
   */
  public void end(int lane) {
    outstanding.updateAndGet(lane, n -> Math.max(0, n - 1));
    synchronized (outstanding) {
      outstanding.notifyAll();
    }
  }

  /**
   * Waits until no lane has a claim, at most until {@code deadline}.
   *
   * @return {@code true} when none is left, {@code false} on time-out or interrupt (the interrupt
   *     flag is kept)
   */
  public boolean awaitNone(Deadline deadline) {
    synchronized (outstanding) {
      return awaitUntil(() -> !any(), deadline);
    }
  }

  /** Waits on the monitor, which the caller holds, until {@code done}, at most until deadline. */
  private boolean awaitUntil(BooleanSupplier done, Deadline deadline) {
    while (!done.getAsBoolean()) {
      long left = deadline.nanosLeft();
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

  /**
   * Counts a claim transaction as open, unless transactions are paused.
   *
   * @return {@code false} while paused: open none, the lane finds nothing this time
   */
  public boolean openTransaction() {
    synchronized (outstanding) {
      if (paused) {
        return false;
      }
      transactions++;
      return true;
    }
  }

  /** Counts an open claim transaction as ended; once per {@link #openTransaction} that said yes. */
  public void closeTransaction() {
    synchronized (outstanding) {
      transactions = Math.max(0, transactions - 1);
      outstanding.notifyAll();
    }
  }

  /** What runs when transactions resume: the source wakes its lanes. */
  public void onResume(Runnable action) {
    this.resumed = action;
  }

  /**
   * Pauses claim transactions and waits until none is open, at most until {@code deadline}. Call
   * {@link #resumeTransactions} after, whatever it returned.
   *
   * @return {@code true} when none is open, {@code false} on time-out or interrupt (the interrupt
   *     flag is kept)
   */
  public boolean pauseTransactions(Deadline deadline) {
    synchronized (outstanding) {
      paused = true;
      return awaitUntil(() -> transactions == 0, deadline);
    }
  }

  /** Lets claim transactions open again, and wakes the lanes. */
  public void resumeTransactions() {
    synchronized (outstanding) {
      paused = false;
    }
    resumed.run();
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
