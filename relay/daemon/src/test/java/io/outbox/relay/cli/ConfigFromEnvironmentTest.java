package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Which file the commands read (--config, OUTBOX_RELAY_CONFIG, the default file) and the
 * CONFIG_FORCE_ variables over it, through the command line with a given environment.
 */
class ConfigFromEnvironmentTest {

  private static final String LANES = "CONFIG_FORCE_outbox__relay_pipelines_orders_lanes";
  private static final String PASSWORD =
      "CONFIG_FORCE_outbox__relay_pipelines_orders_database_password";

  @TempDir Path dir;

  private Path write(String name, int lanes) throws IOException {
    return Files.writeString(
        dir.resolve(name),
        """
        outbox-relay.pipelines.orders {
          database.url = "jdbc:postgresql://127.0.0.1:5432/app"
          lanes = %d
        }
        """
            .formatted(lanes));
  }

  private LaunchEnvironment environment(Map<String, String> variables) {
    return new LaunchEnvironment(variables, dir.resolve("etc/relay.conf"));
  }

  private static int lanes(CommandLineRun run) {
    assertThat(run.err()).isEmpty();
    assertThat(run.exitCode()).isZero();
    return ConfigFactory.parseString(run.out()).getInt("outbox-relay.pipelines.orders.lanes");
  }

  @Test
  void aVariableOverridesTheFileAndCheckConfigNamesItWithSecretsMasked() throws IOException {
    Path file = write("relay.conf", 3);

    CommandLineRun run =
        CommandLineRun.in(
            environment(Map.of(LANES, "5", PASSWORD, "canary-password")),
            "check-config",
            "--config",
            file.toString());

    assertThat(lanes(run)).isEqualTo(5);
    assertThat(run.out())
        .doesNotContain("canary")
        .contains("      lanes = \"5\"  # env " + LANES + "\n")
        .contains("      password = \"******\"  # env " + PASSWORD + "\n")
        .contains("      url = \"jdbc:postgresql://127.0.0.1:5432/app\"  # " + file + ":2\n")
        .containsPattern("\n      batch-size = 500  # default: reference\\.conf:\\d+ of .*\n")
        .containsPattern(
            "\n          bootstrap-servers = \"127.0.0.1:9092\"  # default: reference\\.conf:\\d+"
                + " of .*sink.kafka.*\n");
  }

  @Test
  void aBadValueFromAVariableIsAProblemNamingTheVariable() throws IOException {
    Path file = write("relay.conf", 3);

    CommandLineRun run =
        CommandLineRun.in(
            environment(Map.of(LANES, "many")), "check-config", "--config", file.toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.errLines())
        .containsExactly(
            "invalid configuration " + file + " (1 problem):",
            "  outbox-relay.pipelines.orders.lanes: must be a whole number, not \"many\""
                + " (environment variable "
                + LANES
                + ")");
  }

  @Test
  void withoutConfigOptionReadsTheFileTheVariableNames() throws IOException {
    Path named = write("named.conf", 4);
    Files.createDirectories(dir.resolve("etc"));
    write("etc/relay.conf", 6);

    CommandLineRun run =
        CommandLineRun.in(
            environment(Map.of(ConfigFileOption.ENV, named.toString())), "check-config");

    assertThat(lanes(run)).isEqualTo(4);
    assertThat(run.out()).startsWith("# Effective settings of " + named + ":");
  }

  @Test
  void theConfigOptionWinsOverTheVariable() throws IOException {
    Path named = write("named.conf", 4);
    Path option = write("option.conf", 7);

    CommandLineRun run =
        CommandLineRun.in(
            environment(Map.of(ConfigFileOption.ENV, named.toString())),
            "check-config",
            "-c",
            option.toString());

    assertThat(lanes(run)).isEqualTo(7);
  }

  @Test
  void withNeitherReadsTheDefaultFile() throws IOException {
    Files.createDirectories(dir.resolve("etc"));
    Path fallback = write("etc/relay.conf", 6);

    CommandLineRun run = CommandLineRun.in(environment(Map.of()), "check-config");

    assertThat(lanes(run)).isEqualTo(6);
    assertThat(run.out()).startsWith("# Effective settings of " + fallback + ":");
  }

  @Test
  void aVariableNamingAMissingFileIsAProblemEvenWhenTheDefaultExists() throws IOException {
    Files.createDirectories(dir.resolve("etc"));
    write("etc/relay.conf", 6);
    Path missing = dir.resolve("missing.conf");

    CommandLineRun run =
        CommandLineRun.in(
            environment(Map.of(ConfigFileOption.ENV, missing.toString())), "check-config");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.errLines())
        .containsExactly(
            "invalid configuration " + missing + " (1 problem):",
            "  OUTBOX_RELAY_CONFIG: file not found: " + missing);
  }

  /** Every command that reads the configuration decides the same way, in one place. */
  @ParameterizedTest
  @ValueSource(
      strings = {"check-config", "run", "migrate", "status", "dead-letters list --pipeline orders"})
  void withNoFileAnywhereEveryCommandNamesEachPlaceItLooked(String command) {
    CommandLineRun run = CommandLineRun.in(environment(Map.of(LANES, "5")), command.split(" "));

    String name = command.split(" --")[0];
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.errLines().get(0))
        .isEqualTo(
            "outbox-relay "
                + name
                + ": no configuration file: --config FILE not given, OUTBOX_RELAY_CONFIG not set,"
                + " and "
                + dir.resolve("etc/relay.conf")
                + " (the default) does not exist");
    assertThat(run.errLines().get(1)).startsWith("Usage: outbox-relay " + name);
  }
}
