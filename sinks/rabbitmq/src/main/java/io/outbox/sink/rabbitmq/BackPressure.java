package io.outbox.sink.rabbitmq;

import io.outbox.relay.spi.Ticker;
import java.time.Duration;

/**
 * Remembers that RabbitMQ refused messages with {@code basic.nack} (a queue at its {@code
 * x-max-length} with {@code x-overflow = reject-publish}, or a broker limit) and holds the sink's
 * probe back for a while, so that a pipeline paused by a full queue does not resume, publish and
 * pause again once a second. The hold starts at {@link #FIRST_HOLD} and doubles with every round of
 * refusals that follows a hold without an accepted message between them, up to {@link #MAX_HOLD}.
 * An accepted message starts the count again and cuts a longer hold under way down to the first
 * one: the queue is taking messages again.
 */
final class BackPressure {

  static final Duration FIRST_HOLD = Duration.ofSeconds(1);
  static final Duration MAX_HOLD = Duration.ofSeconds(30);

  private final Ticker ticker;
  private volatile int rounds; // rounds of refusals since the last accepted message
  private long holdStartNanos; // guarded by this; meaningful while holding
  private long holdUntilNanos; // guarded by this; meaningful while holding
  private boolean holding; // guarded by this

  BackPressure(Ticker ticker) {
    this.ticker = ticker;
  }

  /** RabbitMQ refused a message: starts a hold unless one is under way. */
  synchronized void refused() {
    long now = ticker.nanoTime();
    if (holding && now - holdUntilNanos < 0) {
      return; // the same round: the rest of a batch refused together
    }
    rounds = Math.min(rounds + 1, 30);
    holdStartNanos = now;
    holdUntilNanos = now + hold(rounds).toNanos();
    holding = true;
  }

  /**
   * RabbitMQ took a message: the next refusal starts from the first hold again, and a hold under
   * way lasts no longer than the first hold.
   */
  void accepted() {
    if (rounds != 0) { // read on every confirm: lock only when there is something to reset
      synchronized (this) {
        rounds = 0;
        long shortest = holdStartNanos + FIRST_HOLD.toNanos();
        if (holding && holdUntilNanos - shortest > 0) {
          holdUntilNanos = shortest;
        }
      }
    }
  }

  /** Whether a hold is under way: the probe says no while it lasts. */
  synchronized boolean holds() {
    if (holding && ticker.nanoTime() - holdUntilNanos < 0) {
      return true;
    }
    holding = false;
    return false;
  }

  /** The hold after {@code rounds} rounds of refusals. */
  static Duration hold(int rounds) {
    long millis = FIRST_HOLD.toMillis() << Math.min(Math.max(0, rounds - 1), 20);
    return Duration.ofMillis(Math.min(millis, MAX_HOLD.toMillis()));
  }
}
