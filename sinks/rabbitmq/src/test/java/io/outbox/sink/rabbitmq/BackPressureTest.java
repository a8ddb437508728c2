package io.outbox.sink.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The hold a basic.nack puts on the sink's probe, with the test's own clock. */
class BackPressureTest {

  private long now = 1_000_000_000L;
  private final BackPressure pressure = new BackPressure(() -> now);

  private void advance(Duration d) {
    now += d.toNanos();
  }

  @Test
  void noRefusalNoHold() {
    assertThat(pressure.holds()).isFalse();
  }

  @Test
  void aRefusalHoldsTheProbeForTheFirstHold() {
    pressure.refused();

    assertThat(pressure.holds()).isTrue();
    advance(BackPressure.FIRST_HOLD.minusMillis(1));
    assertThat(pressure.holds()).isTrue();
    advance(Duration.ofMillis(1));
    assertThat(pressure.holds()).isFalse();
  }

  @Test
  void refusalsOfOneRoundDoNotLengthenTheHold() {
    pressure.refused();
    advance(Duration.ofMillis(500));
    pressure.refused();
    pressure.refused();

    advance(Duration.ofMillis(500));
    assertThat(pressure.holds()).isFalse();
  }

  @Test
  void everyRoundWithoutAnAcceptedMessageDoublesTheHoldUpToTheCap() {
    long[] expectedMillis = {1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000};
    for (long expected : expectedMillis) {
      pressure.refused();
      advance(Duration.ofMillis(expected - 1));
      assertThat(pressure.holds()).as("hold of %d ms", expected).isTrue();
      advance(Duration.ofMillis(1));
      assertThat(pressure.holds()).as("after %d ms", expected).isFalse();
    }
  }

  @Test
  void anAcceptedMessageStartsTheCountAgain() {
    pressure.refused();
    advance(BackPressure.FIRST_HOLD);
    pressure.refused(); // second round: 2 s
    advance(Duration.ofSeconds(2));
    pressure.accepted();

    pressure.refused();
    advance(BackPressure.FIRST_HOLD);
    assertThat(pressure.holds()).isFalse();
  }

  @Test
  void anAcceptedMessageCutsALongHoldDownToTheFirstHold() {
    pressure.refused();
    advance(Duration.ofSeconds(1));
    pressure.refused(); // second round: 2 s
    advance(Duration.ofSeconds(2));
    pressure.refused(); // third round: 4 s
    advance(Duration.ofMillis(200));
    pressure.accepted(); // e.g. a consumer drained some of the queue

    assertThat(pressure.holds()).isTrue();
    advance(BackPressure.FIRST_HOLD.minusMillis(201));
    assertThat(pressure.holds()).isTrue();
    advance(Duration.ofMillis(1));
    assertThat(pressure.holds()).isFalse();
  }
}
