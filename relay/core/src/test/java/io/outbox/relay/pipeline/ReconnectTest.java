package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.config.PipelineSettings.Backoff;
import io.outbox.testkit.FakeTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The pipeline's reconnect backoff on a driven clock (no sleeps): after each failure the next
 * attempt is due one pause later on the ticker, the pause doubling up to {@code reconnect.max}; a
 * success starts again from {@code reconnect.initial}.
 */
class ReconnectTest {

  private final FakeTime time = new FakeTime();
  private final Reconnect reconnect =
      new Reconnect(
          new RetryPolicy(
              new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), 2.0, 0.0), () -> 0.5),
          time);

  /** Fails once more and checks the next attempt is due exactly {@code pause} later. */
  private void failsThenWaits(long pauseMillis) {
    assertThat(reconnect.failed()).isEqualTo(Duration.ofMillis(pauseMillis));
    time.advance(Duration.ofMillis(pauseMillis - 1));
    assertThat(reconnect.due().passed()).as("1 ms before the pause ends").isFalse();
    time.advance(Duration.ofMillis(1));
    assertThat(reconnect.due().passed()).as("the pause ended").isTrue();
  }

  @Test
  void thePauseDoublesUpToItsMax() {
    failsThenWaits(100);
    failsThenWaits(200);
    failsThenWaits(400);
    failsThenWaits(800);
    failsThenWaits(1_000);
    failsThenWaits(1_000);
    assertThat(reconnect.failures()).isEqualTo(6);
  }

  @Test
  void aSuccessStartsTheBackoffAgain() {
    failsThenWaits(100);
    failsThenWaits(200);
    reconnect.succeeded();
    failsThenWaits(100);
    assertThat(reconnect.failures()).isEqualTo(1);
  }

  @Test
  void nothingIsAwaitedBeforeTheFirstFailure() {
    assertThat(reconnect.due().passed()).isTrue();
  }
}
