package io.outbox.soak;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fault soak, short: two relay processes (polling, Kafka, default settings) under the writers'
 * load, every fault kind once in a fixed order (each at the shortest of its range and aimed at the
 * active relay, the next as soon as the relays published again after the heal), a fixed seed for
 * the writers; fails on any broken invariant. {@code scripts/soak.sh} runs the long, randomised
 * ones. {@link ExactlyOnceSoakIT} does the same with exactly-once delivery (a class of its own, so
 * that the module's two test JVMs run them side by side).
 */
@Timeout(value = 12, unit = TimeUnit.MINUTES) // each
class SoakIT {
  private static final long SEED = 12;

  /**
   * The costliest first (a black-holed active keeps its broken connections until the standby has
   * taken over), the cheapest last (the drain follows it).
   */
  private static final List<FaultKind> ORDER =
      List.of(
          FaultKind.DATABASE_BLACKHOLE,
          FaultKind.SIGSTOP,
          FaultKind.BROKER_RESTART,
          FaultKind.SIGTERM,
          FaultKind.SIGKILL,
          FaultKind.TERMINATE_SESSIONS);

  @Test
  void everyFaultKindOnceBreaksNoInvariant() throws Exception {
    soak(false, ORDER);
  }

  /** A short soak of the faults in {@code order}; fails on any broken invariant. */
  static SoakReport soak(boolean exactlyOnce, List<FaultKind> order) throws Exception {
    Path dir =
        Path.of("target", "soak-runs", "SoakIT-" + System.currentTimeMillis()).toAbsolutePath();
    SoakOptions options =
        new SoakOptions(
            // A cap only: the run ends once the faults were injected and healed.
            Duration.ofMinutes(4),
            SoakOptions.Source.POLLING,
            SoakOptions.Sink.KAFKA,
            exactlyOnce,
            SEED,
            false,
            Duration.ofSeconds(1),
            order,
            dir,
            false,
            false);

    SoakReport report = new Soak(options).run();

    System.out.print(report.text());
    assertThat(report.faults())
        .as("faults injected, in order")
        .extracting(FaultRecord::kind)
        .containsExactlyElementsOf(order);
    assertThat(report.findings().committed()).as("events committed").isGreaterThan(500);
    assertThat(report.violations()).as("broken invariants").isEmpty();
    return report;
  }
}
