package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.support.SettingsReader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PollingSettingsTest {

  @Test
  void readsTheDefaultsOfReferenceConf() {
    PollingSettings s =
        SettingsReader.settings(
            PollingFixture.context(
                PollingFixture.settings(
                    Map.of(
                        "poll-interval", "1s",
                        "standby-check-interval", "1s",
                        "leadership-check-interval", "1s")),
                4,
                new java.util.ArrayList<>()),
            PollingSettings::read,
            "polling source");

    assertThat(s)
        .isEqualTo(
            new PollingSettings(
                Duration.ofSeconds(1),
                true,
                Duration.ofSeconds(1),
                Duration.ofSeconds(1),
                Duration.ofSeconds(10),
                Duration.ofSeconds(10),
                Duration.ofSeconds(10),
                Duration.ofMinutes(5),
                Duration.ofSeconds(10),
                Duration.ofSeconds(15)));
  }

  @Test
  void reportsEveryProblemWithItsFullPathAndValue() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            PollingFixture.context(
                PollingFixture.settings(
                    Map.of(
                        "poll-interval", "soon",
                        "listen", "maybe",
                        "standby-check-interval", "0s",
                        "statement-timeout", "-1s",
                        "connection-timeout", "100ms")),
                4,
                new java.util.ArrayList<>()),
            PollingSettings::read);

    assertThat(problems)
        .extracting(SettingsProblem::path)
        .containsExactlyInAnyOrder(
            PollingFixture.PATH + ".poll-interval",
            PollingFixture.PATH + ".listen",
            PollingFixture.PATH + ".standby-check-interval",
            PollingFixture.PATH + ".statement-timeout",
            PollingFixture.PATH + ".connection-timeout");
    assertThat(problems.get(0).message()).contains("soon");
    assertThat(problems)
        .anySatisfy(p -> assertThat(p.message()).contains("100ms").contains("250ms"));
  }

  @Test
  void refusesALeaseThatIsNotRenewedAtLeastThreeTimes() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            PollingFixture.context(
                PollingFixture.settings(
                    Map.of("leadership-check-interval", "4s", "lease-timeout", "10s")),
                1,
                new java.util.ArrayList<>()),
            PollingSettings::read);

    assertThat(problems)
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.path()).isEqualTo(PollingFixture.PATH + ".leadership-check-interval");
              assertThat(p.message()).contains("10000 ms").contains("4000 ms");
            });
  }

  @Test
  void zeroSwitchesOptionalLimitsOff() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            PollingFixture.context(
                PollingFixture.settings(
                    Map.of(
                        "statement-timeout",
                        "0",
                        "claim-idle-timeout",
                        "0s",
                        "server-keepalive",
                        "0s")),
                1,
                new java.util.ArrayList<>()),
            PollingSettings::read);

    assertThat(problems).isEmpty();
  }

  @Test
  void socketTimeoutMustLeaveTheStatementTimeoutTimeToFire() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            PollingFixture.context(
                PollingFixture.settings(
                    Map.of("statement-timeout", "30s", "socket-timeout", "30s")),
                1,
                new java.util.ArrayList<>()),
            PollingSettings::read);

    assertThat(problems)
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.path()).isEqualTo(PollingFixture.PATH + ".socket-timeout");
              assertThat(p.message())
                  .contains("must exceed statement-timeout (set to \"30s\") by at least 1s")
                  .contains("not \"30s\"");
            });
  }

  @Test
  void socketTimeoutIsRequiredEvenWithoutAStatementTimeout() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            PollingFixture.context(
                PollingFixture.settings(Map.of("statement-timeout", "0", "socket-timeout", "0")),
                1,
                new java.util.ArrayList<>()),
            PollingSettings::read);

    assertThat(problems)
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.path()).isEqualTo(PollingFixture.PATH + ".socket-timeout");
              assertThat(p.message()).contains("at least 1s");
            });
  }

  @Test
  void refusesToBuildFromInvalidSettings() {
    assertThatThrownBy(
            () ->
                SettingsReader.settings(
                    PollingFixture.context(
                        PollingFixture.settings(Map.of("poll-interval", "1ms")),
                        1,
                        new java.util.ArrayList<>()),
                    PollingSettings::read,
                    "polling source"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(PollingFixture.PATH + ".poll-interval");
  }
}
