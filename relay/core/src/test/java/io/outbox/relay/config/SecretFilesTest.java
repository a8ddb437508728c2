package io.outbox.relay.config;

import static io.outbox.relay.config.ConfigFiles.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.SettingsProblem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretFilesTest {

  private static final String DB = "outbox-relay.pipelines.orders.database";

  @TempDir Path dir;

  private Path secret(String name, String content) throws Exception {
    return Files.writeString(dir.resolve(name), content);
  }

  @Test
  void readsThePasswordFromAFileWithoutItsTrailingNewline() throws Exception {
    Path file = secret("db", "canary-file-pw\n");
    LoadedConfig loaded =
        new ConfigFiles(dir).load(ORDERS + DB + ".password-file = \"" + file + "\"\n");

    assertThat(loaded.settings().pipelines().get("orders").database().password())
        .isEqualTo("canary-file-pw");
    assertThat(EffectiveSettingsPrinter.render(loaded))
        .doesNotContain("canary-file-pw")
        .doesNotContain("password-file")
        .contains("password = \"******\"");
  }

  @Test
  void keepsInnerWhitespaceAndOnlyStripsTrailingLineBreaks() throws Exception {
    Path file = secret("db", " a b \r\n\n");
    LoadedConfig loaded =
        new ConfigFiles(dir).load(ORDERS + DB + ".password-file = \"" + file + "\"\n");
    assertThat(loaded.settings().pipelines().get("orders").database().password())
        .isEqualTo(" a b ");
  }

  @Test
  void fileMayComeFromTheEnvironmentAndAppliesThroughPipelineDefaults() throws Exception {
    Path file = secret("db", "from-defaults");
    LoadedConfig loaded =
        new ConfigFiles(dir, Map.of("DB_PASSWORD_FILE", file.toString()))
            .load(
                ORDERS
                    + "outbox-relay.pipeline-defaults.database.password-file ="
                    + " ${?DB_PASSWORD_FILE}\n");
    assertThat(loaded.settings().pipelines().get("orders").database().password())
        .isEqualTo("from-defaults");
  }

  @Test
  void unsetOptionalVariableMeansNoFile() {
    LoadedConfig loaded =
        new ConfigFiles(dir).load(ORDERS + DB + ".password-file = ${?NO_SUCH_VARIABLE}\n");
    assertThat(loaded.settings().pipelines().get("orders").database().password()).isNull();
  }

  @Test
  void worksInsideFreeFormPluginMaps() throws Exception {
    Path file = secret("jaas", "canary-jaas");
    LoadedConfig loaded =
        new ConfigFiles(dir)
            .load(
                ORDERS
                    + "outbox-relay.pipelines.orders.database.properties {"
                    + " \"sslpassword-file\" = \""
                    + file
                    + "\" }\n");
    assertThat(loaded.settings().pipelines().get("orders").database().properties())
        .containsEntry("sslpassword", "canary-jaas")
        .doesNotContainKey("sslpassword-file");
  }

  @Test
  void missingEmptyOrDirectoryFileIsAProblemNamingKeyAndPath() throws Exception {
    Path empty = secret("empty", "\n");
    List<SettingsProblem> problems =
        new ConfigFiles(dir)
            .problems(
                """
                outbox-relay.pipelines {
                  a { database.url = "jdbc:postgresql://h/a", source.type = fake, sink.type = fake
                      database.password-file = "%s/nope" }
                  b { database.url = "jdbc:postgresql://h/b", source.type = fake, sink.type = fake
                      database.password-file = "%s" }
                  c { database.url = "jdbc:postgresql://h/c", source.type = fake, sink.type = fake
                      database.password-file = "%s" }
                }
                """
                    .formatted(dir, empty, dir));

    assertThat(problems)
        .extracting(p -> p.path() + ": " + p.message())
        .containsExactlyInAnyOrder(
            "outbox-relay.pipelines.a.database.password-file: the secret file \""
                + dir
                + "/nope\" does not exist",
            "outbox-relay.pipelines.b.database.password-file: the secret file \""
                + empty
                + "\" is empty",
            "outbox-relay.pipelines.c.database.password-file: the secret file \""
                + dir
                + "\" is a directory, not a file");
    assertThat(problems).allSatisfy(p -> assertThat(p.origin()).matches(".*relay.*\\.conf:\\d+"));
  }

  @Test
  void bothTheSecretAndItsFileIsAProblemThatShowsNeither() throws Exception {
    Path file = secret("db", "canary-in-file");
    List<SettingsProblem> problems =
        new ConfigFiles(dir)
            .problems(
                ORDERS
                    + DB
                    + " { password = \"canary-inline\", password-file = \""
                    + file
                    + "\" }\n");
    assertThat(problems)
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.path()).isEqualTo(DB + ".password-file");
              assertThat(p.message()).startsWith("set either password or password-file, not both");
              assertThat(p.toString()).doesNotContain("canary");
            });
  }

  @Test
  void onlySecretKeysTakeAFile() {
    SecretMasker words = SecretMasker.withoutPlugins();
    assertThat(SecretFiles.isReference("password-file", "a.database", words)).isTrue();
    assertThat(SecretFiles.isReference("trust-store-password-file", "a.sink.rabbitmq", words))
        .isTrue();
    assertThat(SecretFiles.isReference("sasl.jaas.config-file", "a.sink.kafka.producer", words))
        .isTrue();
    assertThat(SecretFiles.isReference("trust-store-file", "a.sink.rabbitmq", words)).isFalse();
    assertThat(SecretFiles.isReference("-file", "a", words)).isFalse();
    // What the plug-in declares secret, whatever its name.
    SecretMasker plugins = FakePlugins.secrets();
    String client = "outbox-relay.pipelines.orders.sink.fake.client";
    assertThat(SecretFiles.isReference("ssl.keystore.key-file", client, plugins)).isTrue();
    assertThat(SecretFiles.isReference("ssl.truststore.certificates-file", client, plugins))
        .isFalse();
    assertThat(new ConfigFiles(dir).problems(ORDERS + DB + ".url-file = \"/x\"\n").get(0).path())
        .as("a non-secret key with -file is an unknown key")
        .isEqualTo(DB + ".url-file");
  }
}
