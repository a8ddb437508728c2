package io.outbox.relay.pipeline;

import static io.outbox.relay.pipeline.Events.event;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class KeyOrderTest {

  @Test
  void keysKeepingToOneDestinationMakeOneWave() {
    var events = List.of(event(1, "a"), event(2, "b"), event(3, "a"), event(4, "a"));
    assertThat(KeyOrder.waves(events, new String[] {"t", "t", "t", "t"}))
        .containsExactly(List.of(0, 1, 2, 3));
  }

  @Test
  void aKeysEventForAnotherDestinationWaitsForTheNextWave() {
    var events = List.of(event(1, "a"), event(2, "b"), event(3, "a"), event(4, "a"), event(5, "b"));
    assertThat(KeyOrder.waves(events, new String[] {"x", "t", "t", "x", "t"}))
        .containsExactly(List.of(0, 1, 4), List.of(2), List.of(3));
  }

  @Test
  void aKeysEventsAfterARetryWaitForTheNextWaveOtherKeysDoNot() {
    // a's first event failed before (1 attempt): a's later events go once it was acknowledged;
    // c's retry is c's only event of the batch, so nothing waits for it.
    var events =
        List.of(
            event(1, "a", 1),
            event(2, "b"),
            event(3, "a"),
            event(4, "a"),
            event(5, "c", 2),
            event(6, "b"));
    assertThat(KeyOrder.waves(events, new String[] {"t", "t", "t", "t", "t", "t"}))
        .containsExactly(List.of(0, 1, 4, 5), List.of(2, 3));
  }

  @Test
  void aRetryAfterAnotherDestinationStillHoldsItsKeysNextEvent() {
    var events = List.of(event(1, "a"), event(2, "a", 3), event(3, "a"));
    assertThat(KeyOrder.waves(events, new String[] {"x", "t", "t"}))
        .containsExactly(List.of(0), List.of(1), List.of(2));
  }

  @Test
  void unroutableEventsStayInTheirKeysWave() {
    var events = List.of(event(1, "a"), event(2, "a"));
    assertThat(KeyOrder.waves(events, new String[] {null, null})).containsExactly(List.of(0, 1));
  }

  @Test
  void anEmptyBatchHasNoWave() {
    assertThat(KeyOrder.waves(List.of(), new String[0])).isEmpty();
  }

  @Test
  void oneEventOfAKeyPerWaveSendsAKeysNthEventInTheNthWave() {
    var events =
        List.of(
            event(1, "a"),
            event(2, "b"),
            event(3, "a"),
            event(4, "a"),
            event(5, "c"),
            event(6, "b"));
    assertThat(KeyOrder.oneEventOfAKeyPerWave(events))
        .containsExactly(List.of(0, 1, 4), List.of(2, 5), List.of(3));
    assertThat(KeyOrder.oneEventOfAKeyPerWave(List.of())).isEmpty();
  }
}
