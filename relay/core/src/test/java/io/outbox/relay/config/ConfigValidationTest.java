package io.outbox.relay.config;

import static io.outbox.relay.config.ConfigFiles.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.outbox.relay.spi.SettingsProblem;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigValidationTest {

  @TempDir Path dir;

  private List<SettingsProblem> problems(String text) {
    return new ConfigFiles(dir).problems(text);
  }

  private SettingsProblem only(String text) {
    List<SettingsProblem> problems = problems(text);
    assertThat(problems).hasSize(1);
    return problems.get(0);
  }

  @Test
  void rejectsATypoInsideAPipelineWithPathSuggestionAndLine() {
    ConfigFiles files = new ConfigFiles(dir);
    Path file = files.write(ORDERS + "outbox-relay.pipelines.orders.batch-sise = 100\n");

    assertThatThrownBy(() -> files.loader().load(file))
        .isInstanceOfSatisfying(
            ConfigProblemsException.class,
            e -> {
              assertThat(e.problems()).hasSize(1);
              SettingsProblem p = e.problems().get(0);
              assertThat(p.path()).isEqualTo("outbox-relay.pipelines.orders.batch-sise");
              assertThat(p.message()).contains("unknown key").contains("did you mean 'batch-size'");
              assertThat(p.origin()).isEqualTo(file + ":6");
              assertThat(e.getMessage())
                  .contains("outbox-relay.pipelines.orders.batch-sise: unknown key");
            });
  }

  @Test
  void rejectsUnknownKeysAnywhereUnderTheRoot() {
    List<SettingsProblem> problems =
        problems(
            ORDERS
                + """
                outbox-relay.htpp.port = 1
                outbox-relay.pipeline-defaults.retry.max-atempts = 3
                outbox-relay.pipelines.orders.database.pasword = x
                outbox-relay.pipelines.orders.sink.fake.srvers = y
                """);

    assertThat(problems)
        .extracting(SettingsProblem::path)
        .containsExactlyInAnyOrder(
            "outbox-relay.htpp",
            "outbox-relay.pipeline-defaults.retry.max-atempts",
            "outbox-relay.pipelines.orders.database.pasword",
            "outbox-relay.pipelines.orders.sink.fake.srvers");
    assertThat(problems).allSatisfy(p -> assertThat(p.message()).startsWith("unknown key"));
  }

  @Test
  void rejectsRelaySettingsWrittenOutsideTheRoot() {
    assertThat(problems(ORDERS + "pipelines.payments.lanes = 2\n"))
        .extracting(SettingsProblem::path)
        .containsExactly("pipelines");
  }

  @Test
  void rejectsAWrongTypeNamingTheValue() {
    SettingsProblem p = only(ORDERS + "outbox-relay.pipelines.orders.lanes = many\n");

    assertThat(p.path()).isEqualTo("outbox-relay.pipelines.orders.lanes");
    assertThat(p.message()).isEqualTo("must be a whole number, not \"many\"");
  }

  @Test
  void rejectsAnObjectWhereAValueBelongsAndTheOtherWayRound() {
    List<SettingsProblem> problems =
        problems(
            ORDERS
                + """
                outbox-relay.pipelines.orders.table { name = x }
                outbox-relay.pipelines.orders.retry = 3
                """);

    assertThat(problems)
        .extracting(SettingsProblem::toString)
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith("outbox-relay.pipelines.orders.table: must be a single value"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith("outbox-relay.pipelines.orders.retry: must be an object, not a"));
    assertThat(problems).hasSize(2);
  }

  @Test
  void rejectsABadDuration() {
    SettingsProblem p = only(ORDERS + "outbox-relay.pipelines.orders.retry.initial-backoff = 1x\n");

    assertThat(p.path()).isEqualTo("outbox-relay.pipelines.orders.retry.initial-backoff");
    assertThat(p.message()).contains("\"1x\" is not a duration");
  }

  @Test
  void rejectsOutOfRangeNumbersAndBadEnums() {
    List<SettingsProblem> problems =
        problems(
            ORDERS
                + """
                outbox-relay.http.port = 70000
                outbox-relay.pipelines.orders {
                  lanes = 0
                  batch-size = 10001
                  retry { max-attempts = 0, multiplier = 0.5, jitter = 1.5, max-backoff = 100ms }
                  sink.reconnect-backoff.initial = -1s
                  on-publish = archive
                }
                """);

    assertThat(problems)
        .extracting(SettingsProblem::toString)
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith("outbox-relay.http.port: must be in [0, 65535], not 70000"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith("outbox-relay.pipelines.orders.lanes: must be in [1, 1024], not 0"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith(
                        "outbox-relay.pipelines.orders.batch-size: must be in [1, 10000], not 10001"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith(
                        "outbox-relay.pipelines.orders.retry.max-attempts: must be >= 1, not 0"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith(
                        "outbox-relay.pipelines.orders.retry.multiplier: must be >= 1.0, not 0.5"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith(
                        "outbox-relay.pipelines.orders.retry.jitter: must be in [0.0, 1.0], not 1.5"))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith(
                        "outbox-relay.pipelines.orders.retry.max-backoff: must be >= initial-backoff (\"1s\"), not \"100ms\""))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith(
                        "outbox-relay.pipelines.orders.sink.reconnect-backoff.initial: must be a positive duration, not \"-1s\""))
        .anySatisfy(
            s ->
                assertThat(s)
                    .startsWith(
                        "outbox-relay.pipelines.orders.on-publish: must be one of mark | delete | position, not \"archive\""));
    assertThat(problems).hasSize(9);
  }

  @Test
  void refusesSettlementByPositionForASourceOtherThanPolling() {
    SettingsProblem p = only(ORDERS + "outbox-relay.pipelines.orders.on-publish = position\n");

    assertThat(p.path()).isEqualTo("outbox-relay.pipelines.orders.on-publish");
    assertThat(p.message())
        .isEqualTo(
            "position needs source.type = polling; the fake source settles each row: use mark or"
                + " delete");
  }

  @Test
  void acceptsSettlementByPositionOnAPartitionedOutbox() {
    List<SettingsProblem> problems =
        problems(
            ORDERS
                + "outbox-relay.pipelines.orders { on-publish = position, layout = partitioned }\n");

    // Only the fake source is refused (the test has no polling source to name).
    assertThat(problems)
        .extracting(SettingsProblem::message)
        .containsExactly(
            "position needs source.type = polling; the fake source settles each row: use mark or"
                + " delete");
  }

  @Test
  void requiresTheDatabaseUrl() {
    SettingsProblem p =
        only(
            """
            outbox-relay.pipelines.orders { source.type = fake, sink.type = fake }
            """);

    assertThat(p.path()).isEqualTo("outbox-relay.pipelines.orders.database.url");
    assertThat(p.message()).startsWith("is required");
  }

  @Test
  void rejectsAnOtlpEndpointThatIsNoHttpUrl() {
    assertThat(
            only(ORDERS + "outbox-relay.tracing.otlp-endpoint = \"collector:4318\"\n").toString())
        .startsWith(
            "outbox-relay.tracing.otlp-endpoint: an OTLP/HTTP endpoint must start with http:// or"
                + " https://, got collector:4318");
    assertThat(only(ORDERS + "outbox-relay.tracing.otlp-endpoint = \"http://\"\n").toString())
        .startsWith("outbox-relay.tracing.otlp-endpoint: must be an OTLP/HTTP URL");
    assertThat(
            only(ORDERS + "outbox-relay.tracing.otlp-endpoint = \"http://c:4318/?a=b\"\n")
                .toString())
        .contains("without query or fragment");
    assertThat(only(ORDERS + "outbox-relay.tracing.enabled = maybe\n").toString())
        .startsWith("outbox-relay.tracing.enabled: must be true or false");
  }

  @Test
  void requiresAtLeastOnePipeline() {
    SettingsProblem p = only("outbox-relay.http.port = 9401\n");

    assertThat(p.path()).isEqualTo("outbox-relay.pipelines");
    assertThat(p.message()).contains("no pipeline");
  }

  @Test
  void rejectsUnknownPluginTypesListingTheKnownOnes() {
    List<SettingsProblem> problems =
        problems(
            ORDERS
                + """
                outbox-relay.pipelines.orders { source.type = polling, sink.type = pulsar }
                """);

    assertThat(problems)
        .extracting(SettingsProblem::path, SettingsProblem::message)
        .containsExactly(
            tuple(
                "outbox-relay.pipelines.orders.source.type",
                "unknown source type \"polling\"; known: fake"),
            tuple(
                "outbox-relay.pipelines.orders.sink.type",
                "unknown sink type \"pulsar\"; known: fake"));
  }

  @Test
  void aCdcSourceMissingFromTheInstallationSaysWhichArchiveHasIt() {
    List<SettingsProblem> problems =
        problems(ORDERS + "outbox-relay.pipelines.orders { source.type = cdc }\n");

    assertThat(problems)
        .extracting(SettingsProblem::path, SettingsProblem::message)
        .containsExactly(
            tuple(
                "outbox-relay.pipelines.orders.source.type",
                "unknown source type \"cdc\"; known: fake. The cdc source is not installed here:"
                    + " the slim distribution (outbox-relay-slim-<version>) leaves it out; the"
                    + " full one (outbox-relay-<version>) has it"));
  }

  @Test
  void reportsTheSelectedPluginsOwnProblemsWithOrigin() {
    ConfigFiles files = new ConfigFiles(dir);
    Path file =
        files.write(
            ORDERS
                + """
                outbox-relay.pipelines.orders.source.fake.poll-interval = 5m
                outbox-relay.pipelines.orders.sink.fake.servers = " "
                """);

    assertThatThrownBy(() -> files.loader().load(file))
        .isInstanceOfSatisfying(
            ConfigProblemsException.class,
            e ->
                assertThat(e.problems())
                    .containsExactly(
                        new SettingsProblem(
                            "outbox-relay.pipelines.orders.source.fake.poll-interval",
                            "must be at most 1m, not 5m",
                            file + ":6"),
                        new SettingsProblem(
                            "outbox-relay.pipelines.orders.sink.fake.servers",
                            "must not be blank",
                            file + ":7")));
  }

  @Test
  void rejectsUnknownTemplateVariables() {
    SettingsProblem p =
        only(ORDERS + "outbox-relay.pipelines.orders.routing.destination = \"x.${aggregate}\"\n");

    assertThat(p.path()).isEqualTo("outbox-relay.pipelines.orders.routing.destination");
    assertThat(p.message()).contains("unknown variable ${aggregate}");
  }

  @Test
  void rejectsBadTableNames() {
    SettingsProblem p =
        only(ORDERS + "outbox-relay.pipelines.orders.dead-letter-table = \"a.b.c\"\n");

    assertThat(p.path()).isEqualTo("outbox-relay.pipelines.orders.dead-letter-table");
    assertThat(p.message()).startsWith("must be \"name\" or \"schema.name\"").endsWith("\"a.b.c\"");
  }

  @Test
  void rejectsTwoPipelinesOnOneOutboxTable() {
    SettingsProblem p =
        only(
            ORDERS
                + """
                outbox-relay.pipelines.copy {
                  database.url = "jdbc:postgresql://127.0.0.1:5432/app"
                  source.type = fake
                  sink.type = fake
                  table = public.outbox
                }
                """);

    assertThat(p.path()).isEqualTo("outbox-relay.pipelines.copy.table");
    assertThat(p.message()).contains("\"orders\" and \"copy\" read the same outbox table");
  }

  @Test
  void reportsEveryProblemAtOnce() {
    String message =
        catchMessage(
            """
            outbox-relay {
              shutdown-timeout = soon
              pipelines.orders {
                database { user = app }
                source.type = fake
                sink.type = nats
                lanes = -1
                retyr { max-attempts = 3 }
              }
            }
            """);

    assertThat(message.lines())
        .hasSize(6)
        .first()
        .asString()
        .startsWith("invalid configuration ")
        .endsWith("(5 problems):");
    assertThat(message)
        .contains("outbox-relay.shutdown-timeout: \"soon\" is not a duration")
        .contains("outbox-relay.pipelines.orders.database.url: is required")
        .contains("outbox-relay.pipelines.orders.sink.type: unknown sink type \"nats\"")
        .contains("outbox-relay.pipelines.orders.lanes: must be in [1, 1024], not -1")
        .contains("outbox-relay.pipelines.orders.retyr: unknown key (did you mean 'retry'?)");
  }

  @Test
  void neverShowsASecretInAProblem() {
    String message =
        catchMessage(
            ORDERS
                + """
                outbox-relay.pipelines.orders.database {
                  url = "mysql://app:canary-1@db/app?password=canary-2"
                  password { canary-3 = 1 }
                }
                """);

    assertThat(message)
        .contains("outbox-relay.pipelines.orders.database.url: must be a PostgreSQL JDBC URL")
        .contains(
            "outbox-relay.pipelines.orders.database.password: must be a string, not an object")
        .doesNotContain("canary");
  }

  @Test
  void reportsSyntaxErrorsWithFileAndLine() {
    ConfigFiles files = new ConfigFiles(dir);
    Path file = files.write("outbox-relay {\n  pipelines {\n    orders { lanes = = 3 }\n");

    assertThatThrownBy(() -> files.loader().load(file))
        .isInstanceOfSatisfying(
            ConfigProblemsException.class,
            e -> {
              assertThat(e.problems()).hasSize(1);
              assertThat(e.problems().get(0).path()).isEqualTo(file + ":3");
              assertThat(e.problems().get(0).message()).startsWith("syntax error: ");
            });
  }

  @Test
  void reportsAMissingFile() {
    Path missing = dir.resolve("nope.conf");

    assertThatThrownBy(() -> new ConfigFiles(dir).loader().load(missing))
        .isInstanceOf(ConfigProblemsException.class)
        .hasMessageContaining("--config: file not found: " + missing);
  }

  private String catchMessage(String text) {
    ConfigFiles files = new ConfigFiles(dir);
    Path file = files.write(text);
    try {
      files.loader().load(file);
    } catch (ConfigProblemsException e) {
      return e.getMessage();
    }
    throw new AssertionError("expected problems in:\n" + text);
  }
}
