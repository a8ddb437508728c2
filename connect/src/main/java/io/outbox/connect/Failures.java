package io.outbox.connect;

import io.outbox.relay.pipeline.RetryPolicy;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;

/** The daemon's failure classes, for events the connector could not get produced. */
final class Failures {

  private Failures() {}

  /** One more failed attempt: a retry with backoff, or a dead letter after {@code maxAttempts}. */
  static Settlement retryOrDeadLetter(
      OutboxEvent event, int maxAttempts, RetryPolicy retry, String error) {
    int attempts = event.attempts() + 1;
    if (attempts >= maxAttempts) {
      return new Settlement.DeadLetter(
          event, Settlement.DeadLetterReason.MAX_ATTEMPTS, attempts, error);
    }
    return new Settlement.Retry(event, attempts, retry.delayAfter(attempts), error);
  }

  /** A failure no retry can fix: dead-lettered at once. */
  static Settlement permanent(OutboxEvent event, String error) {
    return new Settlement.DeadLetter(
        event, Settlement.DeadLetterReason.PERMANENT, event.attempts() + 1, error);
  }
}
