package io.outbox.relay.spi.support;

import io.outbox.relay.spi.Verdict;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The bound on messages sent but not yet answered by the broker: a sender takes a permit before
 * each message, waiting at most until its batch's deadline, and the message's ack (or its failure)
 * gives it back. A window still full at the deadline means the broker does not keep up: the rest of
 * the batch is sink-unavailable ({@link #full}).
 */
public final class InFlightWindow {

  private final Semaphore permits;
  private final int size;
  private final String key;

  /**
   * @param size the most unanswered messages
   * @param key the setting that holds {@code size}, for messages, e.g. {@code max-pending}
   */
  public InFlightWindow(int size, String key) {
    this.permits = new Semaphore(size);
    this.size = size;
    this.key = key;
  }

  /**
   * Waits for room until {@code deadlineNanos} ({@link System#nanoTime()}).
   *
   * @return {@code false} when the window stayed full
   */
  public boolean acquire(long deadlineNanos) throws InterruptedException {
    return permits.tryAcquire(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
  }

  /** Gives back one permit: the message was answered, or not sent after all. */
  public void release() {
    permits.release();
  }

  /**
   * The verdict of event {@code index} of {@code batch} when the window stayed full until the
   * batch's deadline.
   */
  public Verdict full(PendingBatch batch, int index) {
    return batch.unavailable(
        index, key + " (" + size + ") messages still unanswered when the batch timed out");
  }
}
