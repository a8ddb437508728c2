package io.outbox.relay.pipeline;

import static io.outbox.relay.pipeline.Events.event;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.config.PipelineSettings.Backoff;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Settlement.DeadLetterReason;
import io.outbox.relay.spi.Verdict;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class SettlementPlannerTest {

  private final SettlementPlanner planner =
      new SettlementPlanner(
          3,
          new RetryPolicy(
              new Backoff(Duration.ofSeconds(1), Duration.ofMinutes(1), 2.0, 0), () -> 0.5));

  @Test
  void retryableFailureCountsAnAttemptAndSchedulesARetry() {
    OutboxEvent e = event(1, "a");
    var plan = planner.plan(List.of(e), List.of(Verdict.retryable("NotEnoughReplicas")));
    assertThat(plan.settlements())
        .containsExactly(new Settlement.Retry(e, 1, Duration.ofSeconds(1), "NotEnoughReplicas"));
    assertThat(plan.sinkUnavailable()).isFalse();
  }

  @Test
  void deadLettersAfterMaxAttempts() {
    OutboxEvent e = event(1, "a", 2);
    var plan = planner.plan(List.of(e), List.of(Verdict.retryable("still failing")));
    assertThat(plan.settlements())
        .containsExactly(
            new Settlement.DeadLetter(e, DeadLetterReason.MAX_ATTEMPTS, 3, "still failing"));
  }

  @Test
  void permanentFailureDeadLettersAtOnce() {
    OutboxEvent e = event(1, "a");
    var plan = planner.plan(List.of(e), List.of(Verdict.permanent("too large")));
    assertThat(plan.settlements())
        .containsExactly(new Settlement.DeadLetter(e, DeadLetterReason.PERMANENT, 1, "too large"));
  }

  @Test
  void outageReleasesWithoutCountingAttempts() {
    OutboxEvent a = event(1, "a");
    OutboxEvent b = event(2, "b");
    var plan =
        planner.plan(
            List.of(a, b), List.of(Verdict.unavailable("timeout"), Verdict.unavailable("timeout")));
    assertThat(plan.settlements())
        .containsExactly(new Settlement.Release(a), new Settlement.Release(b));
    assertThat(plan.sinkUnavailable()).isTrue();
    assertThat(plan.unavailableError()).isEqualTo("timeout");
  }

  @Test
  void keepsKeyOrderWhileRetrying() {
    OutboxEvent a1 = event(1, "a");
    OutboxEvent b1 = event(2, "b");
    OutboxEvent a2 = event(3, "a");
    OutboxEvent a3 = event(4, "a");
    var plan =
        planner.plan(
            List.of(a1, b1, a2, a3),
            List.of(
                Verdict.retryable("boom"),
                Verdict.published(),
                Verdict.retryable("boom"),
                Verdict.published()));
    assertThat(plan.settlements())
        .containsExactly(
            new Settlement.Retry(a1, 1, Duration.ofSeconds(1), "boom"),
            new Settlement.Published(b1),
            new Settlement.Release(a2),
            new Settlement.Published(a3));
    // a3 reached the broker before a1's failure was known: reported, not hidden.
    assertThat(plan.outOfOrder()).containsExactly(a3);
  }

  @Test
  void deadLetterDoesNotHoldBackTheKey() {
    OutboxEvent a1 = event(1, "a");
    OutboxEvent a2 = event(2, "a");
    var plan =
        planner.plan(List.of(a1, a2), List.of(Verdict.permanent("bad topic"), Verdict.published()));
    assertThat(plan.settlements().get(1)).isEqualTo(new Settlement.Published(a2));
    assertThat(plan.outOfOrder()).isEmpty();
  }

  @Test
  void batchClaimedAheadMayGoOnlyWhenEveryEventIsPublishedOrDeadLettered() {
    OutboxEvent a = event(1, "a");
    OutboxEvent b = event(2, "b");
    OutboxEvent a2 = event(3, "a");
    assertThat(
            planner
                .plan(List.of(a, b), List.of(Verdict.published(), Verdict.permanent("too large")))
                .allFinal())
        .isTrue();
    assertThat(
            planner
                .plan(List.of(a, b), List.of(Verdict.published(), Verdict.retryable("busy")))
                .allFinal())
        .isFalse();
    assertThat(
            planner
                .plan(List.of(a, b), List.of(Verdict.published(), Verdict.unavailable("down")))
                .allFinal())
        .isFalse();
    // A dead-lettered event does not hold its key back; one that failed retryably does, even when
    // dead-lettered for max-attempts, and its key's later event, acknowledged anyway, is out of
    // order: the batch claimed ahead must wait.
    assertThat(
            planner
                .plan(List.of(a, a2), List.of(Verdict.permanent("too large"), Verdict.published()))
                .allFinal())
        .isTrue();
    OutboxEvent lastTry = event(1, "a", 2);
    var plan =
        planner.plan(List.of(lastTry, a2), List.of(Verdict.retryable("busy"), Verdict.published()));
    assertThat(plan.settlements().get(0)).isInstanceOf(Settlement.DeadLetter.class);
    assertThat(plan.outOfOrder()).containsExactly(a2);
    assertThat(plan.allFinal()).isFalse();
  }
}
