package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import java.time.Duration;

/**
 * The pipeline's backoff while its source or sink cannot be reached ({@code reconnect}): counts the
 * failures in a row and says when the next attempt is due on the pipeline's ticker, one pause of
 * its {@link RetryPolicy} after the last failure. One per retrying loop (the supervisor's
 * activation, a lane's claims, the sink gate's probes); not thread-safe.
 */
final class Reconnect {

  private final RetryPolicy backoff;
  private final Ticker ticker;
  private int failures;
  private Deadline due;

  Reconnect(RetryPolicy backoff, Ticker ticker) {
    this.backoff = backoff;
    this.ticker = ticker;
    this.due = ticker.deadline(Duration.ZERO);
  }

  /** One more failure in a row: the next attempt is due after the pause returned ({@link #due}). */
  Duration failed() {
    failures++;
    Duration pause = backoff.delayAfter(failures);
    due = ticker.deadline(pause);
    return pause;
  }

  /** An attempt succeeded: the next failure pauses {@code reconnect.initial} again. */
  void succeeded() {
    failures = 0;
  }

  /** The failures in a row so far. */
  int failures() {
    return failures;
  }

  /** When the next attempt is due: a pause after the last failure (now, before any). */
  Deadline due() {
    return due;
  }
}
