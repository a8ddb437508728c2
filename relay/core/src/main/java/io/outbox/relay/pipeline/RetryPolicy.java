package io.outbox.relay.pipeline;

import io.outbox.relay.config.PipelineSettings.Backoff;
import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with a cap and jitter: attempt {@code n} waits {@code min(max, initial *
 * multiplier^(n-1))}, then randomly up to {@code jitter} of it shorter or longer (never above the
 * cap).
 */
public final class RetryPolicy {

  private final Backoff backoff;
  private final DoubleSupplier random;

  /**
   * @param backoff the settings
   * @param random uniform values in {@code [0, 1)}; injected so tests are deterministic
   */
  public RetryPolicy(Backoff backoff, DoubleSupplier random) {
    this.backoff = backoff;
    this.random = random;
  }

  /**
   * The delay before attempt {@code attempt + 1}, after {@code attempt} failures ({@code >= 1}).
   */
  public Duration delayAfter(int attempt) {
    double initialMs = backoff.initial().toMillis();
    double maxMs = backoff.max().toMillis();
    double base = initialMs * Math.pow(backoff.multiplier(), Math.max(0, attempt - 1));
    if (Double.isInfinite(base) || base > maxMs) {
      base = maxMs;
    }
    double spread = base * backoff.jitter();
    double jittered = base - spread + 2 * spread * random.getAsDouble();
    long ms = (long) Math.min(maxMs, Math.max(0, jittered));
    return Duration.ofMillis(ms);
  }
}
