package io.outbox.relay.config;

import static io.outbox.relay.config.ConfigFiles.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import io.outbox.relay.spi.SettingsProblem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CONFIG_FORCE_ variables: the library's mapping, over the file, problems naming the variable. */
class EnvironmentOverridesTest {

  private static final String LANES = "CONFIG_FORCE_outbox__relay_pipelines_orders_lanes";

  @TempDir Path dir;

  @Test
  void mapsUnderscoresToDotsDashesAndUnderscores() {
    assertThat(EnvironmentOverrides.segments("CONFIG_FORCE_outbox__relay_http_port"))
        .containsExactly("outbox-relay", "http", "port");
    assertThat(EnvironmentOverrides.segments("CONFIG_FORCE_a___b__c_d"))
        .containsExactly("a_b-c", "d");
    assertThat(EnvironmentOverrides.variable("outbox-relay.pipelines.my_orders.batch-size"))
        .isEqualTo("CONFIG_FORCE_outbox__relay_pipelines_my___orders_batch__size");
    assertThat(
            EnvironmentOverrides.segments(
                EnvironmentOverrides.variable("outbox-relay.pipelines.my_orders.batch-size")))
        .containsExactly("outbox-relay", "pipelines", "my_orders", "batch-size");
    assertThatThrownBy(() -> EnvironmentOverrides.segments("CONFIG_FORCE_a____b"))
        .hasMessageContaining("4 underscores");
    assertThatThrownBy(() -> EnvironmentOverrides.segments("CONFIG_FORCE_"))
        .hasMessageContaining("sets no key path");
    assertThatThrownBy(() -> EnvironmentOverrides.segments("CONFIG_FORCE_a_"))
        .hasMessageContaining("sets no key path");
  }

  /**
   * The pom gives the test JVM CONFIG_FORCE_ variables (surefire's environmentVariables), so the
   * library's own reading of the process environment can be compared with ours.
   */
  @Test
  void readsTheProcessEnvironmentAsTheLibraryDoes() {
    Config library = ConfigFactory.systemEnvironmentOverrides();
    assertThat(library.entrySet())
        .as("CONFIG_FORCE_ variables set by relay/core/pom.xml for this test")
        .hasSizeGreaterThanOrEqualTo(3);

    List<SettingsProblem> problems = new ArrayList<>();
    Config ours = EnvironmentOverrides.over(ConfigFactory.empty(), System.getenv(), problems);

    assertThat(problems).isEmpty();
    assertThat(leaves(ours)).isEqualTo(leaves(library));
    assertThat(ours.getString("envcheck.a-b.c_d")).isEqualTo("dash, underscore");
  }

  private static Map<String, Object> leaves(Config config) {
    Map<String, Object> leaves = new TreeMap<>();
    for (Map.Entry<String, ConfigValue> e : config.entrySet()) {
      leaves.put(e.getKey(), e.getValue().unwrapped());
    }
    return leaves;
  }

  @Test
  void aVariableWinsOverTheFileAndIsReadLikeAFileValue() {
    LoadedConfig loaded =
        new ConfigFiles(
                dir,
                Map.of(
                    LANES,
                    "5",
                    "CONFIG_FORCE_outbox__relay_http_port",
                    "9500",
                    "CONFIG_FORCE_outbox__relay_shutdown__timeout",
                    "45s",
                    "CONFIG_FORCE_outbox__relay_pipelines_orders_retry_multiplier",
                    "3.5"))
            .load(ORDERS + "outbox-relay.pipelines.orders.lanes = 3\n");

    RelaySettings s = loaded.settings();
    assertThat(s.pipelines().get("orders").lanes()).isEqualTo(5);
    assertThat(s.http().port()).isEqualTo(9500);
    assertThat(s.shutdownTimeout()).isEqualTo(Duration.ofSeconds(45));
    assertThat(s.pipelines().get("orders").retry().backoff().multiplier()).isEqualTo(3.5);
  }

  @Test
  void variablesWithoutThePrefixChangeNothing() {
    RelaySettings s =
        new ConfigFiles(dir, Map.of("OUTBOX_RELAY_HTTP_PORT", "1", "outbox-relay.http.port", "2"))
            .load(ORDERS)
            .settings();

    assertThat(s.http().port()).isEqualTo(9400);
  }

  @Test
  void aBadValueFromAVariableIsReportedWithTheVariableAsItsOrigin() {
    String batchSize = "CONFIG_FORCE_outbox__relay_pipelines_orders_batch__size";
    String typo = "CONFIG_FORCE_outbox__relay_pipelines_orders_lane";

    List<SettingsProblem> problems =
        new ConfigFiles(dir, Map.of(batchSize, "many", typo, "4")).problems(ORDERS);

    assertThat(problems)
        .containsExactlyInAnyOrder(
            new SettingsProblem(
                "outbox-relay.pipelines.orders.lane",
                "unknown key (did you mean 'lanes'?)",
                "environment variable " + typo),
            new SettingsProblem(
                "outbox-relay.pipelines.orders.batch-size",
                "must be a whole number, not \"many\"",
                "environment variable " + batchSize));
  }

  @Test
  void variablesThatSetNoRelayKeyAreProblemsNamingThem() {
    List<SettingsProblem> problems =
        new ConfigFiles(
                dir,
                Map.of(
                    "CONFIG_FORCE_OUTBOX__RELAY_HTTP_PORT", "1",
                    "CONFIG_FORCE_pipelines_orders_lanes", "2",
                    "CONFIG_FORCE_outbox__relay_pipelines_orders____lanes", "3"))
            .problems(ORDERS);

    assertThat(problems)
        .extracting(SettingsProblem::origin)
        .containsExactlyInAnyOrder(
            "environment variable CONFIG_FORCE_OUTBOX__RELAY_HTTP_PORT",
            "environment variable CONFIG_FORCE_pipelines_orders_lanes",
            "environment variable CONFIG_FORCE_outbox__relay_pipelines_orders____lanes");
    assertThat(problems)
        .extracting(SettingsProblem::message)
        .anyMatch(m -> m.endsWith("(did you mean CONFIG_FORCE_outbox__relay_http_port?)"))
        .anyMatch(m -> m.startsWith("relay settings go inside outbox-relay { ... }"))
        .anyMatch(m -> m.startsWith("4 underscores in a row"));
  }

  @Test
  void aSecretFromAVariableIsMaskedAndNotWarnedAbout() throws Exception {
    Path secretFile = Files.writeString(dir.resolve("rabbit-password"), "canary-file\n");
    LoadedConfig loaded =
        new ConfigFiles(
                dir,
                Map.of(
                    "CONFIG_FORCE_outbox__relay_pipelines_orders_database_password",
                    "canary-env",
                    "CONFIG_FORCE_outbox__relay_pipelines_orders_database_user",
                    "app"))
            .load(ORDERS);
    LoadedConfig fromFile =
        new ConfigFiles(
                dir,
                Map.of(
                    "CONFIG_FORCE_outbox__relay_pipelines_orders_database_password__file",
                    secretFile.toString()))
            .load(ORDERS);

    assertThat(loaded.settings().pipelines().get("orders").database().password())
        .isEqualTo("canary-env");
    assertThat(fromFile.settings().pipelines().get("orders").database().password())
        .isEqualTo("canary-file");
    assertThat(LiteralSecrets.warnings(loaded)).isEmpty();
    String printed = EffectiveSettingsPrinter.render(loaded);
    assertThat(printed)
        .doesNotContain("canary")
        .contains(
            "password = \"******\"  # env"
                + " CONFIG_FORCE_outbox__relay_pipelines_orders_database_password")
        .contains(
            "user = \"app\"  # env CONFIG_FORCE_outbox__relay_pipelines_orders_database_user");
  }

  @Test
  void aPipelineSetOnlyFromTheEnvironmentKeepsTheFilesPipelinesFirst() {
    LoadedConfig loaded =
        new ConfigFiles(
                dir,
                Map.of(
                    "CONFIG_FORCE_outbox__relay_pipelines_billing_database_url",
                    "jdbc:postgresql://127.0.0.1:5432/billing",
                    "CONFIG_FORCE_outbox__relay_pipelines_billing_source_type",
                    "fake",
                    "CONFIG_FORCE_outbox__relay_pipelines_billing_sink_type",
                    "fake",
                    LANES,
                    "4"))
            .load(
                ORDERS
                    + """
                    outbox-relay.pipelines.audit {
                      database.url = "jdbc:postgresql://127.0.0.1:5432/audit"
                      source.type = fake
                      sink.type = fake
                    }
                    """);

    assertThat(loaded.settings().pipelines().keySet())
        .containsExactly("orders", "audit", "billing");
  }
}
