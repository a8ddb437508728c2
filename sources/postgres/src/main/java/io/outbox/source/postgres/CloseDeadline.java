package io.outbox.source.postgres;

import java.time.Duration;

/**
 * The one deadline a source's {@code close(timeout)} shares out among its parts, in the order the
 * polling and CDC sources close in: the retention job first ({@link #stop(RetentionJob)}), then the
 * source's own parts, each given what is left.
 */
public final class CloseDeadline {

  private final long deadlineNanos;

  /** {@code timeout} from now (a negative one counts as zero). */
  public CloseDeadline(Duration timeout) {
    this.deadlineNanos = System.nanoTime() + Math.max(0, timeout.toNanos());
  }

  /** The deadline, on the {@link System#nanoTime()} scale. */
  public long nanos() {
    return deadlineNanos;
  }

  /** What is left until the deadline, at least a millisecond: a part closed late still tries. */
  public Duration left() {
    return Duration.ofNanos(Math.max(1_000_000, deadlineNanos - System.nanoTime()));
  }

  /** Stops the retention job, if there is one, within what is left. */
  public void stop(RetentionJob retention) {
    if (retention != null) {
      retention.close(left());
    }
  }
}
