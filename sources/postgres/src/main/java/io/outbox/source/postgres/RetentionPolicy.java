package io.outbox.source.postgres;

import java.time.Duration;
import java.util.Objects;

/**
 * How long published outbox rows and dead letters are kept, and how retention deletes them.
 *
 * @param published published rows ({@code on-publish = mark}) older than this, by {@code
 *     published_at}, are deleted; {@link Duration#ZERO} keeps them forever
 * @param deadLetters dead letters older than this, by {@code dead_lettered_at}, are deleted; {@link
 *     Duration#ZERO} keeps them forever
 * @param batchSize the most rows one delete statement (one short transaction) removes
 * @param interval the pause between two rounds of deletes
 */
public record RetentionPolicy(
    Duration published, Duration deadLetters, int batchSize, Duration interval) {

  /** Keeps everything. */
  public static final RetentionPolicy OFF =
      new RetentionPolicy(Duration.ZERO, Duration.ZERO, 1000, Duration.ofMinutes(1));

  /**
   * Validates the values.
   *
   * @throws IllegalArgumentException naming the bad value
   */
  public RetentionPolicy {
    Objects.requireNonNull(published, "published");
    Objects.requireNonNull(deadLetters, "deadLetters");
    Objects.requireNonNull(interval, "interval");
    if (published.isNegative() || deadLetters.isNegative()) {
      throw new IllegalArgumentException(
          "retention ages must be positive, or zero for off: published "
              + published
              + ", dead letters "
              + deadLetters);
    }
    if (batchSize < 1) {
      throw new IllegalArgumentException("batch size must be at least 1, got " + batchSize);
    }
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("interval must be positive, got " + interval);
    }
  }

  /** Whether anything is ever deleted. */
  public boolean enabled() {
    return !published.isZero() || !deadLetters.isZero();
  }
}
