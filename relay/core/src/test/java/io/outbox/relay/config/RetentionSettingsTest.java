package io.outbox.relay.config;

import static io.outbox.relay.config.ConfigFiles.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.DatabaseSettings.Retention;
import io.outbox.relay.spi.SettingsProblem;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code retention.*} of a pipeline: defaults, off, and clear errors. */
class RetentionSettingsTest {

  @TempDir Path dir;

  private Retention retention(String extra) {
    return new ConfigFiles(dir)
        .load(ORDERS + extra)
        .settings()
        .pipelines()
        .get("orders")
        .database()
        .retention();
  }

  @Test
  void defaultsKeepPublishedRowsAWeekAndDeadLettersThirtyDays() {
    assertThat(retention(""))
        .isEqualTo(
            new Retention(Duration.ofDays(7), Duration.ofDays(30), 1000, Duration.ofMinutes(1)));
  }

  @Test
  void offOrZeroKeepsThatKindForever() {
    Retention r =
        retention(
            "outbox-relay.pipelines.orders.retention { published = off, dead-letters = 0,"
                + " batch-size = 50, interval = 10s }\n");

    assertThat(r)
        .isEqualTo(new Retention(Duration.ZERO, Duration.ZERO, 50, Duration.ofSeconds(10)));
    assertThat(r.enabled()).isFalse();
  }

  @Test
  void badValuesAreReportedTogetherWithTheirKeys() {
    List<SettingsProblem> problems =
        new ConfigFiles(dir)
            .problems(
                ORDERS
                    + "outbox-relay.pipelines.orders.retention { published = soon,"
                    + " dead-letters = 10ms, batch-size = 0, interval = 100ms }\n");

    assertThat(problems)
        .extracting(p -> p.path() + ": " + p.message())
        .containsExactlyInAnyOrder(
            "outbox-relay.pipelines.orders.retention.published: \"soon\" is not a duration such as"
                + " 12h or 7d, or off",
            "outbox-relay.pipelines.orders.retention.dead-letters: must be off (or 0) or at least"
                + " 1s, not \"10ms\"",
            "outbox-relay.pipelines.orders.retention.batch-size: must be in [1, 100000], not 0",
            "outbox-relay.pipelines.orders.retention.interval: must be at least 1s, not \"100ms\"");
  }
}
