package io.outbox.sink.kafka;

import io.outbox.relay.spi.Deadline;
import java.time.Duration;

/**
 * A timeout or what is left of a deadline, in the form the Kafka clients take it: whole
 * milliseconds of at least one (an admin call's {@code timeoutMs}, a future's wait), or a duration
 * of at least a millisecond (a consumer's calls), so that a deadline just passed still asks once.
 */
final class KafkaTimeouts {

  private KafkaTimeouts() {}

  /** {@code d} in whole milliseconds, at least 1, at most {@link Integer#MAX_VALUE}. */
  static int ms(Duration d) {
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, d.toMillis()));
  }

  /** What is left of {@code deadline} in whole milliseconds, at least 1. */
  static int ms(Deadline deadline) {
    return ms(deadline.left());
  }

  /** What is left of {@code deadline}, at least a millisecond. */
  static Duration left(Deadline deadline) {
    return Duration.ofNanos(Math.max(1_000_000, deadline.nanosLeft()));
  }
}
