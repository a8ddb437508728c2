package io.outbox.relay.config;

import static io.outbox.relay.config.ConfigFiles.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LiteralSecretsTest {

  @TempDir Path dir;

  @Test
  void warnsAboutSecretsWrittenInTheFileNamingKeyAndLineNeverTheValue() {
    List<String> warnings =
        LiteralSecrets.warnings(
            new ConfigFiles(dir)
                .load(
                    ORDERS
                        + """
                        outbox-relay.pipeline-defaults.database.password = "canary-literal"
                        outbox-relay.pipelines.orders.database.properties {
                          sslmode = verify-full
                          sslpassword = "canary-key"
                        }
                        outbox-relay.pipelines.orders.database.url =
                          "jdbc:postgresql://db/app?password=canary-url"
                        """));

    assertThat(warnings)
        .hasSize(3)
        .allSatisfy(w -> assertThat(w).doesNotContain("canary").contains("plain text at " + dir));
    assertThat(warnings.get(0))
        .startsWith("outbox-relay.pipelines.orders.database.password holds a secret")
        .contains(".conf:6;");
    assertThat(String.join("\n", warnings))
        .contains("database.properties.sslpassword holds")
        .contains("database.url holds");
  }

  @Test
  void warnsAboutWhatThePlugInDeclaresSecretButNotAboutACertificate() {
    List<String> warnings =
        LiteralSecrets.warnings(
            new ConfigFiles(dir)
                .load(
                    ORDERS
                        + """
                        outbox-relay.pipelines.orders.sink.fake.client {
                          "ssl.keystore.key" = "-----BEGIN PRIVATE KEY----- canary-pem"
                          "sasl.jaas.config" = "canary-jaas"
                          "ssl.truststore.certificates" = "-----BEGIN CERTIFICATE----- ca"
                          "sasl.oauthbearer.token.endpoint.url" = "https://idp.example/token"
                        }
                        """));

    assertThat(warnings).hasSize(2).noneMatch(w -> w.contains("canary"));
    assertThat(String.join("\n", warnings))
        .contains("sink.fake.client.\"ssl.keystore.key\" holds a secret")
        .contains("sink.fake.client.\"sasl.jaas.config\" holds a secret")
        .doesNotContain("certificates")
        .doesNotContain("endpoint");
  }

  @Test
  void secretsFromTheEnvironmentOrAFileAreFine() throws Exception {
    Path secret = Files.writeString(dir.resolve("pw"), "from-file\n");
    LoadedConfig loaded =
        new ConfigFiles(dir, Map.of("DB_PASSWORD", "from-env"))
            .load(
                ORDERS
                    + "outbox-relay.pipelines.orders.database.password = ${DB_PASSWORD}\n"
                    + "outbox-relay.pipelines.orders.database.properties.sslpassword-file = \""
                    + secret
                    + "\"\n");

    assertThat(loaded.settings().pipelines().get("orders").database().password())
        .isEqualTo("from-env");
    assertThat(LiteralSecrets.warnings(loaded)).isEmpty();
  }
}
