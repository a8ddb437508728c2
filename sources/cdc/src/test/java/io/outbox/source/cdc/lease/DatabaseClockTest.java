package io.outbox.source.cdc.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class DatabaseClockTest {

  @Test
  void theDatabasesTimeIsNeverOverestimatedWhereverInTheRoundTripItWasRead() {
    Instant before = Instant.parse("2026-12-01T05:00:00Z");
    Instant after = before.plusMillis(26); // a slow, asymmetric round trip under load
    Duration trueOffset = Duration.ofMillis(3); // the database's clock runs 3 ms ahead
    for (int readAt = 0; readAt <= 26; readAt++) {
      Instant database = before.plusMillis(readAt).plus(trueOffset);
      Duration estimate = DatabaseClock.offsetOf(before, database, after);
      assertThat(estimate)
          .as("read %d ms into the round trip", readAt)
          .isLessThanOrEqualTo(trueOffset);
      // Late by at most the round trip.
      assertThat(trueOffset.minus(estimate)).isLessThanOrEqualTo(Duration.ofMillis(26));
    }
  }
}
