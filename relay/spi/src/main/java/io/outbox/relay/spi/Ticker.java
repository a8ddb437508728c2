package io.outbox.relay.spi;

/**
 * Monotonic time in nanoseconds, the way Kafka's client injects its {@code Time}: a class that
 * decides something by elapsed time takes a ticker, so that its unit tests drive the time instead
 * of sleeping. {@link #SYSTEM} in production.
 */
@FunctionalInterface
public interface Ticker {

  /** {@link System#nanoTime}. */
  Ticker SYSTEM = System::nanoTime;

  /** Now, in nanoseconds from an arbitrary origin; only differences mean anything. */
  long nanoTime();
}
