package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine.Command;

class MainTest {

  @TempDir Path dir;

  private Path write(String text) throws IOException {
    Path file = Files.createTempFile(dir, "relay", ".conf");
    Files.writeString(file, text);
    return file;
  }

  @Test
  void checkConfigPrintsTheEffectiveSettingsWithSecretsMaskedAndExits0() throws IOException {
    Path file =
        write(
            """
            outbox-relay.pipelines.orders {
              database {
                url = "jdbc:postgresql://127.0.0.1:5432/app?password=canary-url"
                user = app
                password = "canary-password"
              }
              sink.kafka.producer {
                "sasl.jaas.config" = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\\"u\\" password=\\"canary-jaas\\";"
                "ssl.key.password" = "canary-key"
              }
              lanes = 7
            }
            """);

    CommandLineRun run = CommandLineRun.of("check-config", "--config", file.toString());

    assertThat(run.err()).isEmpty();
    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("outbox-relay {")
        .contains("lanes = 7")
        .contains("bootstrap-servers")
        .contains("password = \"******\"")
        .doesNotContain("canary");
  }

  @Test
  void checkConfigAcceptsTheExampleConfigs() {
    for (String example : new String[] {"../../config/relay.conf", "../../config/demo.conf"}) {
      CommandLineRun run = CommandLineRun.of("check-config", "--config", example);

      assertThat(run.err()).as(example).isEmpty();
      assertThat(run.exitCode()).as(example).isZero();
      assertThat(run.out()).as(example).contains("orders {");
    }
  }

  @Test
  void checkConfigListsEveryProblemOnStderrAndExits2() throws IOException {
    Path file =
        write(
            """
            outbox-relay.pipelines.orders {
              database.url = "jdbc:postgresql://127.0.0.1/app"
              retry.initial-backoff = 1x
              batch-sise = 3
            }
            """);

    CommandLineRun run = CommandLineRun.of("check-config", "--config", file.toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.errLines())
        .containsExactly(
            "invalid configuration " + file + " (2 problems):",
            "  outbox-relay.pipelines.orders.batch-sise: unknown key (did you mean 'batch-size'?) ("
                + file
                + ":4)",
            "  outbox-relay.pipelines.orders.retry.initial-backoff: \"1x\" is not a duration"
                + " such as 500ms, 30s or 5m ("
                + file
                + ":3)");
  }

  @Test
  void aMissingConfigFileIsAConfigProblem() {
    Path missing = dir.resolve("missing.conf");

    CommandLineRun run = CommandLineRun.of("check-config", "--config", missing.toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.errLines())
        .containsExactly(
            "invalid configuration " + missing + " (1 problem):",
            "  --config: file not found: " + missing);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "frobnicate                  | outbox-relay: unknown command 'frobnicate'",
        "check-confg                 | outbox-relay: unknown command 'check-confg' (did you mean"
            + " check-config?)",
        "migrate --config            | outbox-relay migrate: Missing required parameter for option"
            + " '--config' (FILE)",
        "check-config -c x --bogus   | outbox-relay check-config: unknown option '--bogus'",
        "check-config -c x extra     | outbox-relay check-config: unexpected argument 'extra'",
        "''                          | outbox-relay: Missing required subcommand",
      })
  void usageErrorsExit2WithOneLineAndTheUsage(String args, String firstLine) {
    CommandLineRun run = CommandLineRun.of(args.isEmpty() ? new String[0] : args.split(" "));

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.errLines().get(0)).isEqualTo(firstLine);
    assertThat(run.errLines().get(1)).startsWith("Usage: outbox-relay");
  }

  @Test
  void versionAndHelpExit0() {
    CommandLineRun version = CommandLineRun.of("--version");
    CommandLineRun help = CommandLineRun.of("--help");
    CommandLineRun migrateHelp = CommandLineRun.of("migrate", "--help");

    assertThat(version.exitCode()).isZero();
    assertThat(version.out()).startsWith("outbox-relay ");
    assertThat(help.exitCode()).isZero();
    assertThat(help.out()).contains("check-config").contains("migrate");
    assertThat(migrateHelp.exitCode()).isZero();
    assertThat(migrateHelp.out()).startsWith("Usage: outbox-relay migrate").contains("--config");
  }

  @Test
  void helpNamesEveryBrokerTheRelayPublishesTo() {
    CommandLineRun help = CommandLineRun.of("--help");

    // picocli wraps the description at 80 columns.
    assertThat(help.out().replaceAll("\\s+", " "))
        .contains("PostgreSQL")
        .contains("Kafka")
        .contains("RabbitMQ")
        .contains("NATS JetStream")
        .contains("Redis Streams");
  }

  @Test
  void unexpectedErrorsAreOneLineWithTheStackTraceOnlyWhenVerbose() {
    CommandLineRun quiet = CommandLineRun.of(new Boom(), "boom");
    CommandLineRun verbose = CommandLineRun.of(new Boom(), "boom", "--verbose");

    assertThat(quiet.exitCode()).isEqualTo(1);
    assertThat(quiet.errLines())
        .containsExactly(
            "boom: unexpected error: java.lang.IllegalStateException: kaput",
            "(run with --verbose for the stack trace)");
    assertThat(verbose.exitCode()).isEqualTo(1);
    assertThat(verbose.err()).contains("kaput").contains("\tat io.outbox.relay.cli.MainTest$Boom");
  }

  @Test
  void expectedFailuresAreOneLineWithoutStackTrace() {
    CommandLineRun run = CommandLineRun.of(new Refuse(), "refuse", "--verbose");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.errLines()).containsExactly("refuse: database unreachable");
  }

  @Command(name = "boom")
  static final class Boom implements Callable<Integer> {
    @Override
    public Integer call() {
      throw new IllegalStateException("kaput");
    }
  }

  @Command(name = "refuse")
  static final class Refuse implements Callable<Integer> {
    @Override
    public Integer call() {
      throw new CommandFailedException("database unreachable");
    }
  }
}
