package io.outbox.relay.config;

import static io.outbox.relay.config.ConfigFiles.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EffectiveSettingsPrinterTest {

  @TempDir Path dir;

  @Test
  void printsEveryEffectiveSettingWithSecretsMasked() {
    LoadedConfig loaded =
        new ConfigFiles(dir, Map.of("APP_DB_PASSWORD", "canary-env"))
            .load(
                ORDERS
                    + """
                    outbox-relay.pipelines.orders {
                      database {
                        user = app
                        password = ${?APP_DB_PASSWORD}
                        properties { sslpassword = canary-prop }
                      }
                      sink.fake {
                        uri = "amqp://app:canary-uri@rabbit:5672/%2f"
                        client { "sasl.jaas.config" = "canary-jaas", "client.id" = relay-1 }
                      }
                      lanes = 6
                    }
                    """);

    String printed = EffectiveSettingsPrinter.render(loaded);

    assertThat(printed).doesNotContain("canary");
    assertThat(printed)
        .startsWith("# Effective settings of " + loaded.source())
        .contains("amqp://app:******@rabbit:5672/%2f")
        .contains("relay-1")
        .contains("\"outbox.${aggregate_type}\"")
        .doesNotContain("pipeline-defaults");
    // What is printed is valid HOCON and holds the effective values.
    Config reparsed = ConfigFactory.parseString(printed).getConfig("outbox-relay");
    assertThat(reparsed.getInt("pipelines.orders.lanes")).isEqualTo(6);
    assertThat(reparsed.getInt("pipelines.orders.batch-size")).isEqualTo(500);
    assertThat(reparsed.getString("pipelines.orders.database.password")).isEqualTo("******");
    assertThat(reparsed.getString("pipelines.orders.database.user")).isEqualTo("app");
    assertThat(reparsed.getString("pipelines.orders.sink.fake.servers")).isEqualTo("localhost:1");
    assertThat(reparsed.getString("pipelines.orders.table")).isEqualTo("outbox");
    assertThat(reparsed.getInt("http.port")).isEqualTo(9400);
  }

  @Test
  void masksWhatThePlugInDeclaresSecretAndShowsWhatItDeclaresPublic() {
    LoadedConfig loaded =
        new ConfigFiles(dir)
            .load(
                ORDERS
                    + """
                    outbox-relay.pipelines.orders.sink.fake.client {
                      "ssl.keystore.key" = "-----BEGIN PRIVATE KEY----- canary-pem"
                      sasl.jaas.config = "canary-jaas"
                      "ssl.truststore.certificates" = "-----BEGIN CERTIFICATE----- public-ca"
                      "sasl.oauthbearer.token.endpoint.url" = "https://idp.example/token"
                    }
                    """);

    String printed = EffectiveSettingsPrinter.render(loaded);

    assertThat(printed)
        .doesNotContain("canary")
        .contains("-----BEGIN CERTIFICATE----- public-ca")
        .contains("https://idp.example/token");
    Config client =
        ConfigFactory.parseString(printed)
            .getConfig("outbox-relay.pipelines.orders.sink.fake.client");
    assertThat(client.getString("\"ssl.keystore.key\"")).isEqualTo("******");
  }

  @Test
  void leavesOutPluginsThatAreNotSelected() {
    LoadedConfig loaded = new ConfigFiles(dir).load(ORDERS);

    Config reparsed =
        ConfigFactory.parseString(EffectiveSettingsPrinter.render(loaded))
            .getConfig("outbox-relay");

    assertThat(reparsed.hasPath("pipelines.orders.sink.fake")).isTrue();
    assertThat(reparsed.hasPath("pipelines.orders.sink.reconnect-backoff.initial")).isTrue();
    assertThat(reparsed.hasPath("pipelines.orders.sink.unused")).isFalse();
  }

  @Test
  void followsEachValueWithWhereItCameFrom() {
    ConfigFiles files =
        new ConfigFiles(
            dir,
            Map.of(
                "APP_DB_PASSWORD",
                "canary-env",
                "CONFIG_FORCE_outbox__relay_pipelines_orders_batch__size",
                "250"));
    Path file =
        files.write(
            ORDERS
                + """
                outbox-relay.pipelines.orders {
                  database.password = ${?APP_DB_PASSWORD}
                  lanes = 6
                }
                """);

    String printed = EffectiveSettingsPrinter.render(files.loader().load(file));

    assertThat(printed)
        .doesNotContain("canary")
        .contains("      lanes = 6  # " + file + ":8\n")
        .contains("      url = \"jdbc:postgresql://127.0.0.1:5432/app\"  # " + file + ":2\n")
        .contains("      password = \"******\"  # env APP_DB_PASSWORD\n")
        .contains(
            "      batch-size = \"250\"  # env"
                + " CONFIG_FORCE_outbox__relay_pipelines_orders_batch__size\n")
        .containsPattern(
            "\n      table = \"outbox\"  # default: reference.conf:\\d+ of .*relay/core/target/classes\n");
    assertThat(
            ConfigFactory.parseString(printed).getInt("outbox-relay.pipelines.orders.batch-size"))
        .isEqualTo(250);
  }
}
