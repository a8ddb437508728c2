package io.outbox.soak;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The randomised fault soak, short: two relay processes (polling, Kafka, default settings) under
 * the writers' load, a fault every ten seconds for two minutes, a fixed seed; fails on any broken
 * invariant. {@code scripts/soak.sh} runs the long ones.
 */
@Timeout(value = 12, unit = TimeUnit.MINUTES)
class SoakIT {
  private static final long SEED = 12;

  @Test
  void twoMinutesOfFaultsBreakNoInvariant() throws Exception {
    Path dir =
        Path.of("target", "soak-runs", "SoakIT-" + System.currentTimeMillis()).toAbsolutePath();
    SoakOptions options =
        new SoakOptions(
            Duration.ofMinutes(2),
            SoakOptions.Source.POLLING,
            SoakOptions.Sink.KAFKA,
            SEED,
            false,
            SoakOptions.FAULT_INTERVAL,
            dir);

    SoakReport report = new Soak(options).run();

    System.out.print(report.text());
    // One fault at a time, each healed and followed by a publication before the next: a freeze or
    // a broker restart takes up to 30 s, so two minutes hold 4 to 12.
    assertThat(report.faults()).as("faults injected").hasSizeGreaterThanOrEqualTo(4);
    assertThat(report.findings().committed()).as("events committed").isGreaterThan(1_000);
    assertThat(report.violations()).as("broken invariants").isEmpty();
  }
}
