package io.outbox.relay.pipeline;

import static io.outbox.relay.pipeline.Events.event;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class WavesTest {

  @Test
  void keysKeepingToOneDestinationMakeOneWave() {
    var events = List.of(event(1, "a"), event(2, "b"), event(3, "a"), event(4, "a"));
    assertThat(Waves.of(events, new String[] {"t", "t", "t", "t"}))
        .containsExactly(List.of(0, 1, 2, 3));
  }

  @Test
  void aKeysEventForAnotherDestinationWaitsForTheNextWave() {
    var events = List.of(event(1, "a"), event(2, "b"), event(3, "a"), event(4, "a"), event(5, "b"));
    assertThat(Waves.of(events, new String[] {"x", "t", "t", "x", "t"}))
        .containsExactly(List.of(0, 1, 4), List.of(2), List.of(3));
  }

  @Test
  void unroutableEventsStayInTheirKeysWave() {
    var events = List.of(event(1, "a"), event(2, "a"));
    assertThat(Waves.of(events, new String[] {null, null})).containsExactly(List.of(0, 1));
  }

  @Test
  void anEmptyBatchHasNoWave() {
    assertThat(Waves.of(List.of(), new String[0])).isEmpty();
  }
}
