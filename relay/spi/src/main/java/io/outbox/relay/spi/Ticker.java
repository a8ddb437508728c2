package io.outbox.relay.spi;

import java.time.Duration;

/**
 * Monotonic time in nanoseconds, the way Kafka's client injects its {@code Time}: a class that
 * decides something by elapsed time takes a ticker, so that its unit tests drive the time instead
 * of sleeping. The relay makes one per process ({@link #SYSTEM}) and hands it to the pipelines and,
 * through {@link PluginContext#ticker}, to the plug-ins.
 */
@FunctionalInterface
public interface Ticker {

  /** {@link System#nanoTime}. */
  Ticker SYSTEM = System::nanoTime;

  /** Now, in nanoseconds from an arbitrary origin; only differences mean anything. */
  long nanoTime();

  /** The deadline {@code timeout} from now on this ticker; a negative timeout counts as zero. */
  default Deadline deadline(Duration timeout) {
    return new Deadline(this, nanoTime() + Math.max(0, timeout.toNanos()));
  }
}
