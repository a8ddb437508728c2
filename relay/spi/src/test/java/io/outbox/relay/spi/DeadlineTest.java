package io.outbox.relay.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A deadline on a driven ticker: what is left, and when it has passed. */
class DeadlineTest {

  private final AtomicLong now = new AtomicLong(-5_000_000_000L); // nanoTime may be negative
  private final Ticker ticker = now::get;

  @Test
  void passesAtItsMomentAndLeavesNothingAfter() {
    Deadline d = ticker.deadline(Duration.ofSeconds(2));
    assertThat(d.left()).isEqualTo(Duration.ofSeconds(2));

    now.addAndGet(Duration.ofMillis(1_999).toNanos());
    assertThat(d.passed()).isFalse();
    assertThat(d.left()).isEqualTo(Duration.ofMillis(1));

    now.addAndGet(Duration.ofMillis(1).toNanos());
    assertThat(d.passed()).isTrue();
    now.addAndGet(Duration.ofSeconds(1).toNanos());
    assertThat(d.nanosLeft()).isZero();
  }

  @Test
  void aNegativeTimeoutHasPassedAlready() {
    assertThat(ticker.deadline(Duration.ofMillis(-1)).passed()).isTrue();
  }
}
