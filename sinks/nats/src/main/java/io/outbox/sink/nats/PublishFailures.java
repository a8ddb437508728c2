package io.outbox.sink.nats;

import io.nats.client.JetStreamApiException;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.support.BatchPublisher;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;

/**
 * Turns a failed publish ack into a verdict (docs/design.md, "Failure classes"): no stream for the
 * subject (the server answered "no responders") is checked again before the next publish, so it is
 * sink-unavailable now; a message the stream can never take is permanent; a stream that cannot
 * store now is sink-unavailable (back-pressure); no ack in time or a lost connection is
 * sink-unavailable; any other JetStream error is retryable, so that a repeating one ends as a dead
 * letter.
 */
final class PublishFailures {

  /** The message is larger than the stream's max_msg_size (JetStream API error code). */
  static final int MESSAGE_TOO_LARGE = 10054;

  /**
   * The stream cannot store now: full with discard = new, out of resources, no quorum (JetStream
   * API error codes).
   */
  static final Set<Integer> CANNOT_STORE_NOW = Set.of(10077, 10023, 10008, 10047);

  /**
   * @param verdict the event's verdict, with a one-line error naming the subject
   * @param noStream whether no stream answered for the subject
   */
  record Failure(Verdict verdict, boolean noStream) {}

  private PublishFailures() {}

  static Failure classify(Throwable error, String subject) {
    Throwable e = BatchPublisher.unwrap(error);
    String where = "subject '" + subject + "': ";
    if (e instanceof JetStreamApiException api) {
      String what = "JetStream error " + api.getApiErrorCode() + ": " + api.getErrorDescription();
      if (api.getApiErrorCode() == MESSAGE_TOO_LARGE) {
        return new Failure(Verdict.permanent(where + what), false);
      }
      if (CANNOT_STORE_NOW.contains(api.getApiErrorCode())) {
        return new Failure(
            Verdict.unavailable(where + "the stream cannot store now: " + what), false);
      }
      return new Failure(Verdict.retryable(where + what), false);
    }
    if (e instanceof IOException && String.valueOf(e.getMessage()).contains("503")) {
      return new Failure(
          Verdict.unavailable(
              where + "no stream answered (no responders): " + BatchPublisher.describe(e)),
          true);
    }
    if (e instanceof TimeoutException || e instanceof CancellationException) {
      return new Failure(Verdict.unavailable(where + "no publish ack from NATS in time"), false);
    }
    return new Failure(Verdict.unavailable(where + BatchPublisher.describe(e)), false);
  }
}
