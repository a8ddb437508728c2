package io.outbox.relay.spi.support;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Verdict;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

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
   * Waits for room until {@code deadline}.
   *
   * @return {@code false} when the window stayed full
   */
  public boolean acquire(Deadline deadline) throws InterruptedException {
    return permits.tryAcquire(deadline.nanosLeft(), TimeUnit.NANOSECONDS);
  }

  /**
   * Takes room for event {@code index} of {@code batch}, waiting until the batch's deadline.
   *
   * @return {@code true}: send it, and {@link #release} the room on its ack (or failure); {@code
   *     false}: it got its verdict instead, either the window stayed full (then the events from
   *     {@code index} on are sink-unavailable, {@link #full}), or it got one while the sender
   *     waited (then its room is given back)
   */
  public boolean admit(PendingBatch batch, int index) throws InterruptedException {
    if (!acquire(batch.deadline())) {
      batch.failFrom(index, full(batch, index));
      return false;
    }
    if (batch.verdict(index) != null) { // the batch expired while the sender waited for room
      release();
      return false;
    }
    return true;
  }

  /** Starts sending one message; the future completes with the broker's ack, or its failure. */
  @FunctionalInterface
  public interface AsyncSend {
    CompletionStage<?> send();
  }

  /**
   * Sends event {@code index} of {@code batch} within the window, unless {@link #admit} gave it its
   * verdict instead. Its ack gives its verdict, published or {@code failure.apply(error)}, and only
   * then the room back: a sender waiting for room then sees a failed key. A send that throws gives
   * the room back and rethrows.
   *
   * @param failure the verdict of a failed ack, from the error the client completed the future with
   *     (see {@link BatchPublisher#unwrap})
   */
  public void send(
      PendingBatch batch, int index, AsyncSend send, Function<Throwable, Verdict> failure)
      throws InterruptedException {
    if (!admit(batch, index)) {
      return;
    }
    CompletionStage<?> ack;
    try {
      ack = send.send();
    } catch (RuntimeException | Error e) {
      release();
      throw e;
    }
    ack.whenComplete(
        (answer, error) -> {
          try {
            batch.complete(index, error == null ? Verdict.published() : failure.apply(error));
          } finally {
            release();
          }
        });
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
