package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.config.PipelineSettings.Backoff;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

  private static final Backoff BACKOFF =
      new Backoff(Duration.ofSeconds(1), Duration.ofMinutes(5), 2.0, 0.2);

  @Test
  void growsExponentiallyUpToTheCap() {
    RetryPolicy policy = new RetryPolicy(BACKOFF, () -> 0.5); // 0.5 = no jitter
    assertThat(policy.delayAfter(1)).isEqualTo(Duration.ofSeconds(1));
    assertThat(policy.delayAfter(2)).isEqualTo(Duration.ofSeconds(2));
    assertThat(policy.delayAfter(5)).isEqualTo(Duration.ofSeconds(16));
    assertThat(policy.delayAfter(9)).isEqualTo(Duration.ofMinutes(4).plusSeconds(16));
    assertThat(policy.delayAfter(10)).isEqualTo(Duration.ofMinutes(5));
    assertThat(policy.delayAfter(10_000)).isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void jitterStaysWithinItsFractionAndUnderTheCap() {
    assertThat(new RetryPolicy(BACKOFF, () -> 0.0).delayAfter(3))
        .isEqualTo(Duration.ofMillis(3200));
    assertThat(new RetryPolicy(BACKOFF, () -> 0.999999).delayAfter(3).toMillis())
        .isBetween(4799L, 4800L);
    assertThat(new RetryPolicy(BACKOFF, () -> 0.999999).delayAfter(20))
        .isEqualTo(Duration.ofMinutes(5));
  }
}
