package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.source.postgres.OutboxVerdicts;
import java.util.ArrayList;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class ConnectionsTest {

  @Test
  void redactsPasswordsFromUrls() {
    assertThat(
            Connections.redact("jdbc:postgresql://db:5432/app?user=app&password=s3cret&ssl=true"))
        .isEqualTo("jdbc:postgresql://db:5432/app?user=app&password=******&ssl=true");
    assertThat(Connections.redact("jdbc:postgresql://app:s3cret@db/app"))
        .isEqualTo("jdbc:postgresql://app:******@db/app");
    assertThat(Connections.redact("jdbc:postgresql://db/app"))
        .isEqualTo("jdbc:postgresql://db/app");
  }

  @Test
  void boundsEverySessionOnBothSidesOfTheConnection() {
    Properties claims = connections(Map.of()).driverProperties("claims", true);
    Properties leader = connections(Map.of()).driverProperties("leader", false);

    assertThat(claims.getProperty("socketTimeout")).isEqualTo("15");
    assertThat(leader.getProperty("socketTimeout")).isEqualTo("15");
    assertThat(claims.getProperty("options"))
        .contains("-c statement_timeout=10000")
        .contains("-c tcp_keepalives_idle=10")
        .contains("-c tcp_user_timeout=20000");
    assertThat(leader.getProperty("options")).contains("-c tcp_user_timeout=20000");
  }

  @Test
  void claimSessionsArePlannedThroughTheIndexesAndTheOthersAreNot() {
    Properties claims = connections(Map.of()).driverProperties("claims", true);
    Properties leader = connections(Map.of()).driverProperties("leader", false);

    assertThat(claims.getProperty("options"))
        .contains("-c jit=off -c enable_seqscan=off -c enable_sort=off");
    assertThat(leader.getProperty("options")).contains("-c jit=off").doesNotContain("enable_");
    assertThat(claims.getProperty("options")).doesNotContain("plan_cache_mode");
  }

  @Test
  void claimSessionsOfAPartitionedOutboxArePlannedAfreshForEachStatement() {
    DatabaseSettings partitioned =
        new DatabaseSettings(
            "jdbc:postgresql://db/app",
            "app",
            null,
            Map.of(),
            "outbox",
            "outbox_dead_letter",
            DatabaseSettings.OnPublish.MARK,
            "p",
            DatabaseSettings.Retention.OFF,
            Map.of(),
            new DatabaseSettings.Partitions(4, 1_000_000));
    Properties claims =
        new Connections(partitioned, settings(), "p").driverProperties("claims", true);

    assertThat(claims.getProperty("options"))
        .contains("-c enable_seqscan=off -c enable_sort=off -c plan_cache_mode=force_custom_plan");
  }

  @Test
  void theUsersSocketTimeoutWinsAndTheirOptionsStay() {
    Properties p =
        connections(Map.of("socketTimeout", "120", "options", "-c search_path=app"))
            .driverProperties("claims", true);

    assertThat(p.getProperty("socketTimeout")).isEqualTo("120");
    assertThat(p.getProperty("options"))
        .startsWith("-c search_path=app ")
        .contains("-c tcp_user_timeout=");
  }

  @Test
  void noServerTimeoutsWhenKeepaliveIsOff() {
    PollingSettings settings =
        SettingsReader.settings(
            PollingFixture.context(
                PollingFixture.settings(Map.of("server-keepalive", "0")), 1, new ArrayList<>()),
            PollingSettings::read,
            "polling source");
    Properties p = new Connections(database(Map.of()), settings, "p").driverProperties("x", false);

    assertThat(p.getProperty("options")).doesNotContain("tcp_");
  }

  private static Connections connections(Map<String, String> properties) {
    return new Connections(database(properties), settings(), "p");
  }

  private static PollingSettings settings() {
    return SettingsReader.settings(
        PollingFixture.context(PollingFixture.settings(Map.of()), 1, new ArrayList<>()),
        PollingSettings::read,
        "polling source");
  }

  private static DatabaseSettings database(Map<String, String> properties) {
    return new DatabaseSettings(
        "jdbc:postgresql://db/app",
        "app",
        null,
        properties,
        "outbox",
        "outbox_dead_letter",
        DatabaseSettings.OnPublish.MARK,
        "p");
  }

  @Test
  void errorTextFitsTheLastErrorColumn() {
    assertThat(OutboxVerdicts.clean("a\0b")).isEqualTo("a b");
    assertThat(OutboxVerdicts.clean("x".repeat(5000))).hasSize(2000).endsWith("...");
  }
}
