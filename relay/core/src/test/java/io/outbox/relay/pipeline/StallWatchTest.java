package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.config.PipelineSettings.Backoff;
import io.outbox.testkit.FakeTime;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The stall rule on a driven clock (no sleeps): a lane without progress for {@code stall-timeout}
 * makes the pipeline offer the active role, again every {@code stall-timeout} while the stall
 * lasts; a sink stall whose hand-over came back is not handed over again within ten timeouts.
 */
class StallWatchTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final FakeTime time = new FakeTime();
  private final FakeSource source = new FakeSource(1, List.of());
  private final SinkGate gate =
      new SinkGate(
          "p",
          null,
          new RetryPolicy(
              new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), 2.0, 0.0), () -> 0.5),
          Duration.ofSeconds(1),
          time);
  private final PipelineState state = new PipelineState("p");
  private final StallWatch watch = new StallWatch("p", TIMEOUT, source, gate, state, time);
  private final LaneProgress lane = new LaneProgress(time);

  private void advance(Duration d) {
    time.advance(d);
  }

  @Test
  void aStalledLaneOffersTheRoleOncePerTimeoutWhileTheStallLasts() {
    advance(TIMEOUT.minusMillis(1));
    assertThat(watch.check(List.of(lane))).isFalse();
    assertThat(source.yieldedBecause).as("not yet stalled").isEmpty();

    advance(Duration.ofMillis(1));
    assertThat(watch.check(List.of(lane))).as("no standby took it").isFalse();
    assertThat(source.yieldedBecause)
        .singleElement()
        .asString()
        .contains("lane 0 made no progress for 10000 ms (starting)");

    advance(TIMEOUT.minusMillis(1));
    watch.check(List.of(lane));
    assertThat(source.yieldedBecause).as("within the timeout of the offer").hasSize(1);
    advance(Duration.ofMillis(1));
    watch.check(List.of(lane));
    assertThat(source.yieldedBecause).as("a timeout after the offer").hasSize(2);

    lane.progressed();
    advance(TIMEOUT.minusMillis(1));
    watch.check(List.of(lane));
    assertThat(source.yieldedBecause).as("progress ended the stall").hasSize(2);
  }

  @Test
  void aStandbyTakingTheRoleEndsTheWatch() {
    source.yields = true;
    lane.at(LaneProgress.PUBLISHING);
    advance(TIMEOUT);
    assertThat(watch.check(List.of(lane))).isTrue();
    assertThat(state.keepClaiming()).isFalse();
    assertThat(source.yieldedBecause).singleElement().asString().contains("(publishing)");
  }

  @Test
  void aSinkStallHandedBackIsNotHandedOverAgainUntilTenTimeoutsOrTheSinkCameBack() {
    source.yields = true;
    lane.at(LaneProgress.PUBLISHING);
    advance(TIMEOUT);
    assertThat(watch.check(List.of(lane))).isTrue(); // handed over; the standby hands it back

    LaneProgress again = new LaneProgress(time); // the next activation's lane
    again.at(LaneProgress.PUBLISHING);
    advance(TIMEOUT);
    assertThat(watch.check(List.of(again))).as("the same outage: carrying on").isFalse();
    assertThat(source.yieldedBecause).hasSize(1);

    advance(TIMEOUT.multipliedBy(8));
    assertThat(watch.check(List.of(again))).as("nine timeouts after the hand-over").isFalse();
    advance(TIMEOUT);
    assertThat(watch.check(List.of(again))).as("ten timeouts after the hand-over").isTrue();
    assertThat(source.yieldedBecause).hasSize(2);
  }
}
