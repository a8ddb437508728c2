package io.outbox.testkit;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Waiting on the process of a private server ({@link PrivateKafka}, {@link PrivateRabbit}, {@link
 * PrivateServer}): its start, polled until it is ready and failed as soon as the process exits or
 * the time is up; and its end, within a timeout.
 */
final class ProcessWait {

  private final Process process;
  private final Duration timeout;
  private final long deadline;
  private final Duration poll;
  private final Object owner;
  private final Function<String, IllegalStateException> failure;

  /**
   * A start's wait, its {@code timeout} counted from now.
   *
   * @param poll the pause between two looks
   * @param owner the server, as messages name it
   * @param failure the exception to throw for why the start failed ({@code "exited with code 1
   *     while starting"}, {@code "did not come up within 30 s"}); it may end the process first
   */
  ProcessWait(
      Process process,
      Duration timeout,
      Duration poll,
      Object owner,
      Function<String, IllegalStateException> failure) {
    this.process = process;
    this.timeout = timeout;
    this.deadline = System.nanoTime() + timeout.toNanos();
    this.poll = poll;
    this.owner = owner;
    this.failure = failure;
  }

  /**
   * Returns once {@code ready} says so; a later call keeps the deadline of the first.
   *
   * @throws IllegalStateException from {@code failure} when the process exits or the time is up, or
   *     when interrupted (the interrupt flag restored)
   */
  void until(BooleanSupplier ready) {
    while (!ready.getAsBoolean()) {
      if (!process.isAlive()) {
        throw failure.apply("exited with code " + process.exitValue() + " while starting");
      }
      if (System.nanoTime() - deadline > 0) {
        throw failure.apply("did not come up within " + timeout.toSeconds() + " s");
      }
      try {
        Thread.sleep(poll.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for " + owner, e);
      }
    }
  }

  /**
   * Whether {@code p} exited within {@code timeout}; when interrupted, whether it has exited by
   * then (the interrupt flag restored).
   */
  static boolean exited(Process p, Duration timeout) {
    try {
      return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !p.isAlive();
    }
  }
}
