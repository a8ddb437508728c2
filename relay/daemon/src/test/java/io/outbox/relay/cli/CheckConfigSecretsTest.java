package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.outbox.relay.config.LiteralSecrets;
import io.outbox.relay.config.RelayConfigLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * check-config with the real plug-ins: what Kafka's client, the PostgreSQL driver, Debezium's
 * connector and the RabbitMQ sink declare secret is masked and warned about when written in plain
 * text, whatever its name; what they declare public (a CA certificate) is shown.
 */
class CheckConfigSecretsTest {

  private static final String PEM_KEY =
      "-----BEGIN PRIVATE KEY-----\\ncanary-pem\\n-----END PRIVATE KEY-----";
  private static final String PEM_CA =
      "-----BEGIN CERTIFICATE-----\\npublic-ca\\n-----END CERTIFICATE-----";

  @TempDir Path dir;

  private Path config() throws IOException {
    return Files.writeString(
        dir.resolve("relay.conf"),
        """
        outbox-relay.pipelines {
          orders {
            database {
              url = "jdbc:postgresql://127.0.0.1:5432/app"
              properties { sslmode = verify-full, sslpassword = "canary-sslpassword" }
            }
            sink.kafka.producer {
              "security.protocol" = SSL
              "ssl.keystore.type" = PEM
              "ssl.keystore.key" = "%s"
              "ssl.truststore.type" = PEM
              "ssl.truststore.certificates" = "%s"
              "sasl.jaas.config" = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\\"u\\" password=\\"canary-jaas\\";"
              "sasl.oauthbearer.assertion.private.key.passphrase" = "canary-passphrase"
            }
          }
          invoices {
            database.url = "jdbc:postgresql://127.0.0.1:5432/app"
            table = "invoices_outbox"
            dead-letter-table = "invoices_dead_letter"
            source {
              type = cdc
              cdc.debezium { "database.sslpassword" = "canary-debezium" }
            }
            sink {
              type = rabbitmq
              rabbitmq.password = "canary-rabbit"
            }
          }
        }
        """
            .formatted(PEM_KEY, PEM_CA));
  }

  @Test
  void checkConfigMasksWhatTheClientsDeclareSecretAndShowsTheCaCertificate() throws IOException {
    CommandLineRun run = CommandLineRun.of("check-config", "--config", config().toString());

    assertThat(run.err()).isEmpty();
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).doesNotContain("canary").contains("public-ca");
    Config printed = ConfigFactory.parseString(run.out()).getConfig("outbox-relay.pipelines");
    Config producer = printed.getConfig("orders.sink.kafka.producer");
    assertThat(producer.getString("\"ssl.keystore.key\"")).isEqualTo("******");
    assertThat(producer.getString("\"sasl.jaas.config\"")).isEqualTo("******");
    assertThat(producer.getString("\"sasl.oauthbearer.assertion.private.key.passphrase\""))
        .isEqualTo("******");
    assertThat(producer.getString("\"ssl.truststore.certificates\"")).contains("public-ca");
    assertThat(printed.getString("orders.database.properties.sslpassword")).isEqualTo("******");
    assertThat(printed.getString("invoices.sink.rabbitmq.password")).isEqualTo("******");
  }

  @Test
  void plainTextSecretsAreWarnedAboutButNotTheCaCertificate() throws IOException {
    List<String> warnings = LiteralSecrets.warnings(RelayConfigLoader.standard().load(config()));

    String all = String.join("\n", warnings);
    assertThat(all)
        .doesNotContain("canary")
        .contains("orders.sink.kafka.producer.\"ssl.keystore.key\" holds a secret")
        .contains("orders.sink.kafka.producer.\"sasl.jaas.config\" holds a secret")
        .contains(
            "orders.sink.kafka.producer.\"sasl.oauthbearer.assertion.private.key.passphrase\""
                + " holds a secret")
        .contains("orders.database.properties.sslpassword holds a secret")
        .contains("invoices.source.cdc.debezium.\"database.sslpassword\" holds a secret")
        .contains("invoices.sink.rabbitmq.password holds a secret")
        .doesNotContain("certificates");
  }
}
