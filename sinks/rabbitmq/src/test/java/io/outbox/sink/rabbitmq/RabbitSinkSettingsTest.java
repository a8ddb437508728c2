package io.outbox.sink.rabbitmq;

import static io.outbox.sink.rabbitmq.Contexts.PATH;
import static io.outbox.sink.rabbitmq.Contexts.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.support.SettingsReader;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RabbitSinkSettingsTest {

  @Test
  void referenceDefaultsAreValid() {
    assertThat(SettingsReader.problems(context(""), RabbitSinkSettings::read)).isEmpty();
    RabbitSinkSettings s =
        SettingsReader.settings(context(""), RabbitSinkSettings::read, "rabbitmq sink");
    assertThat(s.uri()).isEqualTo("amqp://guest:guest@127.0.0.1:5672/%2f");
    assertThat(s.routingKey()).isEqualTo("${aggregate_type}.${event_type}");
    assertThat(s.confirmTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(s.maxUnconfirmed()).isEqualTo(1000);
    assertThat(s.channels()).isEqualTo(4);
    assertThat(s.connectionTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(s.heartbeat()).isEqualTo(Duration.ofSeconds(30));
    assertThat(s.declare()).isEmpty();
    assertThat(s.checkExchanges()).isTrue();
    assertThat(s.trustStore()).isEmpty();
    assertThat(s.trustStorePassword()).isEmpty();
  }

  @Test
  void declaredExchangesAreReadWithTheirDefaults() {
    RabbitSinkSettings s =
        SettingsReader.settings(
            context(
                """
                declare {
                  "outbox.order" { type = topic }
                  audit { type = fanout, durable = false, auto-delete = true }
                }
                """),
            RabbitSinkSettings::read,
            "rabbitmq sink");
    assertThat(s.declare())
        .containsOnlyKeys("outbox.order", "audit")
        .containsEntry(
            "outbox.order", new RabbitSinkSettings.Exchange("outbox.order", "topic", true, false))
        .containsEntry("audit", new RabbitSinkSettings.Exchange("audit", "fanout", false, true));
  }

  @Test
  void exchangeDefaultsComeFromTheConfigurationNotTheCode() {
    RabbitSinkSettings s =
        SettingsReader.settings(
            context(
                """
                exchange-defaults { durable = false, auto-delete = true }
                declare { tmp { type = direct }, kept { type = topic, durable = true } }
                """),
            RabbitSinkSettings::read,
            "rabbitmq sink");
    assertThat(s.declare())
        .containsEntry("tmp", new RabbitSinkSettings.Exchange("tmp", "direct", false, true))
        .containsEntry("kept", new RabbitSinkSettings.Exchange("kept", "topic", true, true));
    assertThat(
            SettingsReader.problems(
                context("exchange-defaults.durable = often"), RabbitSinkSettings::read))
        .extracting(SettingsProblem::path)
        .containsExactly(PATH + ".exchange-defaults.durable");
  }

  @Test
  void everyBadValueIsReportedAtOnceWithItsFullPath() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            context(
                """
                uri = "http://guest:secret@host:5672/"
                routing-key = "${aggregate_type}.${tenant}"
                confirm-timeout = 0s
                max-unconfirmed = 0
                channels = 1000
                connection-timeout = soon
                heartbeat = -1s
                check-exchanges = maybe
                trust-store = "/no/such/file.p12"
                declare { "outbox.order" { type = queue, durable = perhaps, color = red } }
                """),
            RabbitSinkSettings::read);
    assertThat(problems)
        .extracting(SettingsProblem::path)
        .containsExactlyInAnyOrder(
            PATH + ".uri",
            PATH + ".routing-key",
            PATH + ".confirm-timeout",
            PATH + ".max-unconfirmed",
            PATH + ".channels",
            PATH + ".connection-timeout",
            PATH + ".heartbeat",
            PATH + ".check-exchanges",
            PATH + ".trust-store",
            PATH + ".declare.\"outbox.order\".type",
            PATH + ".declare.\"outbox.order\".durable",
            PATH + ".declare.\"outbox.order\".color");
    assertThat(problems)
        .filteredOn(p -> p.path().endsWith(".channels"))
        .singleElement()
        .satisfies(p -> assertThat(p.message()).isEqualTo("must be in [1, 256], not 1000"));
    assertThat(problems)
        .filteredOn(p -> p.path().endsWith(".type"))
        .singleElement()
        .satisfies(p -> assertThat(p.message()).endsWith("not \"queue\""));
  }

  @Test
  void uriProblemsNeverShowThePassword() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            context("uri = \"kafka://relay:s3cret@host:5672/%2f\""), RabbitSinkSettings::read);
    assertThat(problems)
        .singleElement()
        .satisfies(p -> assertThat(p.path()).isEqualTo(PATH + ".uri"));
    assertThat(problems.get(0).message())
        .contains("amqp:// or amqps://")
        .contains("relay:****@host")
        .doesNotContain("s3cret");
  }

  @Test
  void uriWithoutHostOrWithASlashInTheVhostIsAProblem() {
    assertThat(RabbitSinkSettings.uriProblem("amqp:///vhost")).contains("must name a host");
    assertThat(RabbitSinkSettings.uriProblem("amqp://h:5672/a/b")).contains("%2f");
    assertThat(RabbitSinkSettings.uriProblem("amqps://u:p@h/%2f")).isNull();
    assertThat(RabbitSinkSettings.uriProblem("amqp://h")).isNull();
  }

  @Test
  void maskedUriAndToStringHideBothPasswords() {
    RabbitSinkSettings s =
        SettingsReader.settings(
            context(
                """
                uri = "amqps://relay:s3cret@rabbit:5671/prod"
                trust-store-password = "t0psecret"
                """),
            RabbitSinkSettings::read,
            "rabbitmq sink");
    assertThat(s.maskedUri()).isEqualTo("amqps://relay:****@rabbit:5671/prod");
    assertThat(s.toString()).doesNotContain("s3cret").doesNotContain("t0psecret").contains("****");
    assertThat(RabbitSinkSettings.mask("amqp://rabbit/%2f")).isEqualTo("amqp://rabbit/%2f");
    assertThat(RabbitSinkSettings.mask("amqp://relay@rabbit/%2f"))
        .isEqualTo("amqp://relay:****@rabbit/%2f");
  }

  @Test
  void declareMustBeAnObjectOfObjects() {
    assertThat(SettingsReader.problems(context("declare = [a]"), RabbitSinkSettings::read))
        .singleElement()
        .satisfies(p -> assertThat(p.path()).isEqualTo(PATH + ".declare"));
    assertThat(SettingsReader.problems(context("declare { a = topic }"), RabbitSinkSettings::read))
        .singleElement()
        .satisfies(p -> assertThat(p.message()).contains("must be an object"));
    assertThat(
            SettingsReader.problems(
                context("declare { a { durable = true } }"), RabbitSinkSettings::read))
        .singleElement()
        .satisfies(p -> assertThat(p.path()).isEqualTo(PATH + ".declare.a.type"));
  }

  @Test
  void unquotedDottedExchangeNamesAreFlaggedWithAHint() {
    assertThat(
            SettingsReader.problems(
                context("declare { outbox.order { type = topic } }"), RabbitSinkSettings::read))
        .extracting(SettingsProblem::message)
        .anySatisfy(m -> assertThat(m).contains("quote names with dots"));
  }

  @Test
  void fromRejectsInvalidSettingsListingTheProblems() {
    assertThatThrownBy(
            () ->
                SettingsReader.settings(
                    context("channels = 0"), RabbitSinkSettings::read, "rabbitmq sink"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(PATH + ".channels");
  }
}
