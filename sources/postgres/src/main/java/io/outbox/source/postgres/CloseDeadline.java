package io.outbox.source.postgres;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import java.time.Duration;

/**
 * The one deadline a source's {@code close(timeout)} shares out among its parts, in the order the
 * polling and CDC sources close in: the retention job first ({@link #stop(RetentionJob)}), then the
 * source's own parts, each given what is left.
 */
public final class CloseDeadline {

  private final Deadline deadline;

  /** {@code timeout} from now on {@code ticker} (a negative one counts as zero). */
  public CloseDeadline(Duration timeout, Ticker ticker) {
    this.deadline = ticker.deadline(timeout);
  }

  /** The deadline. */
  public Deadline deadline() {
    return deadline;
  }

  /** What is left until the deadline, at least a millisecond: a part closed late still tries. */
  public Duration left() {
    return Duration.ofNanos(Math.max(1_000_000, deadline.nanosLeft()));
  }

  /** Stops the retention job, if there is one, within what is left. */
  public void stop(RetentionJob retention) {
    if (retention != null) {
      retention.close(left());
    }
  }
}
