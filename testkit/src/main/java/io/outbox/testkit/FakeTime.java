package io.outbox.testkit;

import io.outbox.relay.spi.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Time a test drives, what Kafka's {@code MockTime} is to its client: a {@link Ticker} and a {@link
 * Clock} that stand still until {@link #advance} moves both together. Hand it to the class under
 * test as its ticker, its clock, or both; a timing rule then runs without a sleep.
 */
public final class FakeTime extends Clock implements Ticker {

  /** Where the ticker starts: not zero, since a few classes read zero as "never". */
  private static final long START_NANOS = 1_000_000_000_000L;

  private final AtomicLong elapsed;
  private final Instant start;
  private final ZoneId zone;

  /** Wall time starting at 2026-01-01T00:00:00Z. */
  public FakeTime() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  /** Wall time starting at {@code start}. */
  public FakeTime(Instant start) {
    this(new AtomicLong(), start, ZoneOffset.UTC);
  }

  private FakeTime(AtomicLong elapsed, Instant start, ZoneId zone) {
    this.elapsed = elapsed;
    this.start = start;
    this.zone = zone;
  }

  /** Moves the ticker and the clock on by {@code d}. */
  public FakeTime advance(Duration d) {
    if (d.isNegative()) {
      throw new IllegalArgumentException("time only moves on, not by " + d);
    }
    elapsed.addAndGet(d.toNanos());
    return this;
  }

  /** How far {@link #advance} moved it since it was made. */
  public Duration elapsed() {
    return Duration.ofNanos(elapsed.get());
  }

  @Override
  public long nanoTime() {
    return START_NANOS + elapsed.get();
  }

  @Override
  public Instant instant() {
    return start.plusNanos(elapsed.get());
  }

  @Override
  public ZoneId getZone() {
    return zone;
  }

  /** The same time, seen in {@code zone}: advancing either moves both. */
  @Override
  public Clock withZone(ZoneId zone) {
    return new FakeTime(elapsed, start, zone);
  }
}
