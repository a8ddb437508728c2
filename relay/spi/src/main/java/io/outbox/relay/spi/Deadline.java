package io.outbox.relay.spi;

import java.time.Duration;

/**
 * The end of a bounded wait, on a {@link Ticker}: made from a timeout ({@link Ticker#deadline}),
 * then asked what is left and whether it passed, so that every timeout runs on the ticker the relay
 * injected and a test can drive it.
 *
 * @param ticker the ticker it is measured on
 * @param nanos the moment it ends, on {@code ticker}'s scale
 */
public record Deadline(Ticker ticker, long nanos) {

  /** Whether the deadline has come (its very moment counts as passed). */
  public boolean passed() {
    return ticker.nanoTime() - nanos >= 0;
  }

  /** Nanoseconds left, zero once it passed. */
  public long nanosLeft() {
    return Math.max(0, nanos - ticker.nanoTime());
  }

  /** What is left, zero once it passed. */
  public Duration left() {
    return Duration.ofNanos(nanosLeft());
  }
}
