package io.outbox.soak;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polling for a condition with a deadline, for the harness (tests use Awaitility). */
final class Waits {
  private static final long POLL_MILLIS = 200;

  private Waits() {}

  /**
   * Returns once {@code condition} holds.
   *
   * @throws IllegalStateException naming {@code what} when it did not hold within {@code timeout}
   */
  static void until(Duration timeout, BooleanSupplier condition, String what) {
    if (!holdsWithin(timeout, condition)) {
      throw new IllegalStateException(
          "timed out after " + timeout.toSeconds() + " s waiting for " + what);
    }
  }

  /** Whether {@code condition} held within {@code timeout}. */
  static boolean holdsWithin(Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      pause(Duration.ofMillis(POLL_MILLIS));
    }
    return true;
  }

  /** Sleeps {@code d} (nothing when not positive): a fault's length or a pacing. */
  static void pause(Duration d) {
    if (d.isNegative() || d.isZero()) {
      return;
    }
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
