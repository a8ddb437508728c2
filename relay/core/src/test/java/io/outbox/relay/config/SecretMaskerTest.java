package io.outbox.relay.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import org.junit.jupiter.api.Test;

class SecretMaskerTest {

  private static final String ORDERS = "outbox-relay.pipelines.orders.";
  private final SecretMasker words = SecretMasker.withoutPlugins();
  private final SecretMasker plugins = FakePlugins.secrets();

  @Test
  void whatAPlugInDeclaresSecretIsSecretWhateverItsName() {
    assertThat(plugins.isSecret(ORDERS + "sink.fake.client.\"ssl.keystore.key\"")).isTrue();
    assertThat(plugins.isSecret(ORDERS + "sink.fake.client.ssl.keystore.key")).isTrue();
    assertThat(plugins.isSecret(ORDERS + "sink.fake.client.\"sasl.jaas.config\"")).isTrue();
    assertThat(plugins.isSecret("outbox-relay.pipeline-defaults.sink.fake.client.ssl.keystore.key"))
        .isTrue();
    // The same key under another plug-in's subtree is not the fake client's property.
    assertThat(words.isSecret(ORDERS + "sink.fake.client.\"ssl.keystore.key\"")).isFalse();
  }

  @Test
  void whatAPlugInDeclaresNotSecretIsShownAlthoughItsNameSoundsSecret() {
    assertThat(plugins.isSecret(ORDERS + "sink.fake.client.\"ssl.truststore.certificates\""))
        .isFalse();
    assertThat(
            plugins.isSecret(ORDERS + "sink.fake.client.\"sasl.oauthbearer.token.endpoint.url\""))
        .isFalse();
    // A class name, although "password" is in its name.
    assertThat(plugins.isSecret(ORDERS + "database.properties.sslpasswordcallback")).isFalse();
    assertThat(words.isSecret(ORDERS + "database.properties.sslpasswordcallback")).isTrue();
  }

  @Test
  void theDriversSecretPropertiesAndTheRelaysPasswordAreSecret() {
    assertThat(plugins.isSecret(ORDERS + "database.password")).isTrue();
    assertThat(plugins.isSecret(ORDERS + "database.properties.sslpassword")).isTrue();
    assertThat(plugins.isSecret(ORDERS + "database.properties.sslkey")).isFalse();
    assertThat(plugins.isSecret(ORDERS + "database.user")).isFalse();
  }

  @Test
  void keysNoOwnerKnowsFallBackToTheirName() {
    assertThat(plugins.isSecret(ORDERS + "sink.fake.client.\"custom.login.client-secret\""))
        .isTrue();
    assertThat(plugins.isSecret(ORDERS + "sink.other.\"ssl.key.password\"")).isTrue();
    assertThat(plugins.isSecret(ORDERS + "database.properties.customToken")).isTrue();
    assertThat(plugins.isSecret(ORDERS + "sink.fake.client.\"linger.ms\"")).isFalse();
  }

  @Test
  void treatsPasswordSecretTokenAndJaasKeysAsSecretsByName() {
    assertThat(words.isSecret("outbox-relay.pipelines.orders.database.password")).isTrue();
    assertThat(words.isSecret("a.sink.kafka.producer.\"ssl.key.password\"")).isTrue();
    assertThat(words.isSecret("a.ssl.truststore-password")).isTrue();
    assertThat(words.isSecret("a.client-secret")).isTrue();
    assertThat(words.isSecret("a.secret")).isTrue();
    assertThat(words.isSecret("a.token")).isTrue();
    assertThat(words.isSecret("a.producer.\"sasl.jaas.config\"")).isTrue();
    assertThat(words.isSecret("a.producer.sasl.jaas.config")).isTrue();
  }

  @Test
  void leavesOrdinaryKeysAlone() {
    assertThat(words.isSecret("outbox-relay.pipelines.orders.database.user")).isFalse();
    assertThat(words.isSecret("outbox-relay.pipelines.orders.database.url")).isFalse();
    assertThat(words.isSecret("a.password-policy.min-length")).isFalse();
    assertThat(words.isSecret("a.sasl.mechanism")).isFalse();
  }

  @Test
  void hidesThePasswordOfAUriButKeepsTheRest() {
    assertThat(SecretMasker.maskEmbedded("amqp://user:pass@host:5672/%2f"))
        .isEqualTo("amqp://user:******@host:5672/%2f");
    assertThat(SecretMasker.maskEmbedded("jdbc:postgresql://db/app?user=a&password=p&ssl=true"))
        .isEqualTo("jdbc:postgresql://db/app?user=a&password=******&ssl=true");
    assertThat(
            SecretMasker.maskEmbedded(
                "jdbc:postgresql://db/app?sslmode=verify-full&sslpassword=k3y&x=1;token=t"))
        .isEqualTo(
            "jdbc:postgresql://db/app?sslmode=verify-full&sslpassword=******&x=1;token=******");
    assertThat(SecretMasker.maskEmbedded("amqp://host:5672")).isEqualTo("amqp://host:5672");
    assertThat(SecretMasker.maskEmbedded("outbox.${aggregate_type}"))
        .isEqualTo("outbox.${aggregate_type}");
  }

  @Test
  void masksEverySecretInATree() {
    ConfigObject tree =
        ConfigFactory.parseString(
                """
                database { user = app, password = "canary-1", port = 5 }
                producer { "sasl.jaas.config" = "canary-2", "ssl.key.password" = 1234 }
                hosts = ["amqp://u:canary-3@h1", "amqp://h2"]
                token = null
                """)
            .root();

    String rendered = words.mask(tree, "x").render();

    assertThat(rendered).doesNotContain("canary").doesNotContain("1234");
    assertThat(rendered).contains("amqp://u:******@h1").contains("app").contains("amqp://h2");
  }
}
