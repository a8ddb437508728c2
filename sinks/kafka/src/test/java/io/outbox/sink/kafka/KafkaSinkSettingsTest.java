package io.outbox.sink.kafka;

import static io.outbox.sink.kafka.Contexts.PATH;
import static io.outbox.sink.kafka.Contexts.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.support.SettingsReader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KafkaSinkSettingsTest {

  @Test
  void referenceDefaultsAreValid() {
    assertThat(SettingsReader.problems(context(""), KafkaSinkSettings::read)).isEmpty();
    KafkaSinkSettings s =
        SettingsReader.settings(context(""), KafkaSinkSettings::read, "kafka sink");
    assertThat(s.bootstrapServers()).isEqualTo("127.0.0.1:9092");
    // The relay's producer defaults come from reference.conf, not from Java.
    assertThat(s.producer())
        .containsOnly(
            Map.entry("linger.ms", "5"),
            Map.entry("batch.size", "65536"),
            Map.entry("max.in.flight.requests.per.connection", "5"));
    assertThat(s.sendTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(s.probeTimeout()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void debeziumHeadersWithPlacementsAreReadAndPlacementsWithoutThemRefused() {
    KafkaSinkSettings s =
        SettingsReader.settings(
            context("headers = debezium, additional-placement = \"event_type:header:eventType\""),
            KafkaSinkSettings::read,
            "kafka");
    assertThat(s.debeziumHeaders())
        .containsExactly(new HeaderPlacement(HeaderPlacement.Field.EVENT_TYPE, "eventType"));

    List<SettingsProblem> problems =
        SettingsReader.problems(
            context("additional-placement = \"event_type:header\""), KafkaSinkSettings::read);
    assertThat(problems)
        .extracting(p -> p.path() + ": " + p.message())
        .containsExactly(
            PATH
                + ".additional-placement: applies to headers = debezium only; with headers ="
                + " relay the row's headers column and the relay's five headers are sent");
  }

  @Test
  void acksOtherThanAllIsAProblemNamingTheFullPathAndValue() {
    List<SettingsProblem> problems =
        SettingsReader.problems(context("producer.acks = 1"), KafkaSinkSettings::read);
    assertThat(problems).hasSize(1);
    assertThat(problems.get(0).path()).isEqualTo(PATH + ".producer.acks");
    assertThat(problems.get(0).message()).contains("must be all").endsWith("got 1");
  }

  @Test
  void acksAllOrMinusOneIsAccepted() {
    assertThat(SettingsReader.problems(context("producer { acks = all }"), KafkaSinkSettings::read))
        .isEmpty();
    assertThat(
            SettingsReader.problems(context("producer { acks = \"-1\" }"), KafkaSinkSettings::read))
        .isEmpty();
  }

  @Test
  void everySettingThatBreaksIdempotenceIsReportedAtOnce() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            context(
                """
                producer {
                  "enable.idempotence" = false
                  acks = 0
                  max.in.flight.requests.per.connection = 6
                  retries = 0
                  transactional.id = "tx"
                  "key.serializer" = "org.apache.kafka.common.serialization.ByteArraySerializer"
                  bootstrap.servers = "elsewhere:9092"
                }
                """),
            KafkaSinkSettings::read);
    assertThat(problems)
        .extracting(SettingsProblem::path)
        .containsExactlyInAnyOrder(
            PATH + ".producer.enable.idempotence",
            PATH + ".producer.acks",
            PATH + ".producer.max.in.flight.requests.per.connection",
            PATH + ".producer.retries",
            PATH + ".producer.transactional.id",
            PATH + ".producer.key.serializer",
            PATH + ".producer.bootstrap.servers");
    assertThat(problems)
        .filteredOn(p -> p.path().endsWith("enable.idempotence"))
        .singleElement()
        .satisfies(p -> assertThat(p.message()).endsWith("got false"));
    assertThat(problems)
        .filteredOn(p -> p.path().endsWith("per.connection"))
        .singleElement()
        .satisfies(p -> assertThat(p.message()).contains("at most 5").endsWith("got 6"));
  }

  @Test
  void partitioningThatIgnoresKeysIsAProblem() {
    assertThat(
            SettingsReader.problems(
                context(
                    """
                    producer {
                      partitioner.ignore.keys = true
                      partitioner.class = org.apache.kafka.clients.producer.RoundRobinPartitioner
                    }
                    """),
                KafkaSinkSettings::read))
        .extracting(SettingsProblem::path)
        .containsExactlyInAnyOrder(
            PATH + ".producer.partitioner.ignore.keys", PATH + ".producer.partitioner.class");
    assertThat(
            SettingsReader.problems(
                context("producer.partitioner.ignore.keys = false"), KafkaSinkSettings::read))
        .isEmpty();
  }

  @Test
  void quotedAndNestedProducerKeysBothFlattenToDottedNames() {
    KafkaSinkSettings s =
        SettingsReader.settings(
            context(
                """
                producer { "linger.ms" = 10, compression.type = zstd }
                producer.batch.size = 131072
                producer.ssl.enabled.protocols = [TLSv1.2, TLSv1.3]
                """),
            KafkaSinkSettings::read,
            "kafka sink");
    assertThat(s.producer())
        .containsEntry("linger.ms", "10")
        .containsEntry("compression.type", "zstd")
        .containsEntry("batch.size", "131072")
        .containsEntry("ssl.enabled.protocols", "TLSv1.2,TLSv1.3")
        .containsEntry("max.in.flight.requests.per.connection", "5") // reference.conf
        .hasSize(5);
  }

  @Test
  void quotedKeyWinsOverTheNestedSpellingOfTheSameProperty() {
    KafkaSinkSettings s =
        SettingsReader.settings(
            context("producer { linger.ms = 1, \"linger.ms\" = 20 }"),
            KafkaSinkSettings::read,
            "kafka sink");
    assertThat(s.producer()).containsEntry("linger.ms", "20").hasSize(3); // + reference.conf's
  }

  @Test
  void producerValuesOfTheWrongTypeAreProblems() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            context("producer { linger.ms = soon, compression.type = brotli }"),
            KafkaSinkSettings::read);
    assertThat(problems)
        .extracting(SettingsProblem::path)
        .containsExactlyInAnyOrder(
            PATH + ".producer.linger.ms", PATH + ".producer.compression.type");
    assertThat(problems.get(0).message() + problems.get(1).message())
        .contains("'soon'")
        .contains("'brotli'");
  }

  @Test
  void unknownProducerPropertiesPassThrough() {
    assertThat(
            SettingsReader.problems(
                context("producer { my.interceptor.setting = 3 }"), KafkaSinkSettings::read))
        .isEmpty();
  }

  @Test
  void bootstrapServersMustNameHostPortPairs() {
    assertThat(
            SettingsReader.problems(context("bootstrap-servers = \"\""), KafkaSinkSettings::read))
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.path()).isEqualTo(PATH + ".bootstrap-servers");
              assertThat(p.message()).contains("at least one");
            });
    assertThat(
            SettingsReader.problems(
                context("bootstrap-servers = \"k1:9092,k2,k3:99999\""), KafkaSinkSettings::read))
        .extracting(SettingsProblem::message)
        .containsExactly(
            "entry 'k2' is not host:port", "entry 'k3:99999' has a port outside 1..65535: 99999");
  }

  @Test
  void bootstrapServersMayBeAList() {
    KafkaSinkSettings s =
        SettingsReader.settings(
            context("bootstrap-servers = [\"k1:9092\", \"[::1]:9093\"]"),
            KafkaSinkSettings::read,
            "kafka sink");
    assertThat(s.bootstrapServers()).isEqualTo("k1:9092,[::1]:9093");
  }

  @Test
  void durationsMustBeValidAndPositive() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            context("send-timeout = forever\nprobe-timeout = 0s"), KafkaSinkSettings::read);
    assertThat(problems)
        .extracting(SettingsProblem::path)
        .containsExactly(PATH + ".send-timeout", PATH + ".probe-timeout");
    assertThat(problems.get(0).message()).contains("\"forever\"");
    assertThat(problems.get(1).message()).contains("not \"0s\"");
  }

  @Test
  void deliveryTimeoutMayNotOutlastSendTimeout() {
    assertThat(
            SettingsReader.problems(
                context("send-timeout = 10s\nproducer { delivery.timeout.ms = 20000 }"),
                KafkaSinkSettings::read))
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.path()).isEqualTo(PATH + ".producer.delivery.timeout.ms");
              assertThat(p.message()).contains("10000 ms").contains("20000 ms");
            });
  }

  @Test
  void sendTimeoutMustExceedLinger() {
    assertThat(
            SettingsReader.problems(
                context("send-timeout = 100ms\nproducer { linger.ms = 100 }"),
                KafkaSinkSettings::read))
        .singleElement()
        .satisfies(p -> assertThat(p.path()).isEqualTo(PATH + ".send-timeout"));
  }

  @Test
  void userRequestTimeoutMustFitInTheDeliveryTimeout() {
    assertThat(
            SettingsReader.problems(
                context("send-timeout = 10s\nproducer { request.timeout.ms = 20000 }"),
                KafkaSinkSettings::read))
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.path()).isEqualTo(PATH + ".send-timeout");
              assertThat(p.message()).contains("5 + 20000 ms").contains("10000 ms");
            });
  }

  @Test
  void producerMustBeAnObject() {
    assertThat(
            SettingsReader.problems(context("producer = \"linger.ms=5\""), KafkaSinkSettings::read))
        .singleElement()
        .satisfies(p -> assertThat(p.path()).isEqualTo(PATH + ".producer"));
  }

  @Test
  void fromRejectsInvalidSettingsListingEveryProblem() {
    assertThatThrownBy(
            () ->
                SettingsReader.settings(
                    context("producer.acks = 1\nsend-timeout = -1s"),
                    KafkaSinkSettings::read,
                    "kafka sink"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(PATH + ".producer.acks")
        .hasMessageContaining(PATH + ".send-timeout");
  }

  @Test
  void toStringHidesSecrets() {
    KafkaSinkSettings s =
        SettingsReader.settings(
            context(
                """
                producer {
                  "sasl.jaas.config" = "org.apache.kafka.common.security.plain.PlainLoginModule required password=\\"hunter2\\";"
                  "ssl.truststore.password" = "hunter3"
                }
                """),
            KafkaSinkSettings::read,
            "kafka sink");
    assertThat(s.toString()).doesNotContain("hunter2").doesNotContain("hunter3").contains("******");
  }
}
