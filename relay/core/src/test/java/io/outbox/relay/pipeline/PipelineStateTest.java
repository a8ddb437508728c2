package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.testkit.FakeTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The stop deadline on a driven clock: batches in flight are given up once it passed, not before.
 */
class PipelineStateTest {

  private final FakeTime time = new FakeTime();
  private final PipelineState state = new PipelineState("p");

  @Test
  void batchesInFlightAreGivenUpOnceTheStopDeadlinePassed() {
    assertThat(state.abandonInFlight()).as("not stopping").isFalse();

    state.stop(time.deadline(Duration.ofSeconds(4)));
    assertThat(state.keepClaiming()).isFalse();
    time.advance(Duration.ofMillis(3_999));
    assertThat(state.abandonInFlight()).isFalse();
    time.advance(Duration.ofMillis(1));
    assertThat(state.abandonInFlight()).isTrue();
  }

  @Test
  void aPauseEndsAtOnceWhenItsDeadlinePassedAndNotAfterAStop() {
    assertThat(state.sleepUnlessStopping(time.deadline(Duration.ZERO))).isTrue();

    state.stop(time.deadline(Duration.ofSeconds(1)));
    assertThat(state.sleepUnlessStopping(time.deadline(Duration.ofHours(1)))).isFalse();
  }
}
