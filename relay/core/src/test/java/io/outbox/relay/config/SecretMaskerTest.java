package io.outbox.relay.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import org.junit.jupiter.api.Test;

class SecretMaskerTest {

  @Test
  void treatsPasswordSecretTokenAndJaasKeysAsSecrets() {
    assertThat(SecretMasker.isSecret("outbox-relay.pipelines.orders.database.password")).isTrue();
    assertThat(SecretMasker.isSecret("a.sink.kafka.producer.\"ssl.key.password\"")).isTrue();
    assertThat(SecretMasker.isSecret("a.ssl.truststore-password")).isTrue();
    assertThat(SecretMasker.isSecret("a.client-secret")).isTrue();
    assertThat(SecretMasker.isSecret("a.secret")).isTrue();
    assertThat(SecretMasker.isSecret("a.token")).isTrue();
    assertThat(SecretMasker.isSecret("a.producer.\"sasl.jaas.config\"")).isTrue();
    assertThat(SecretMasker.isSecret("a.producer.sasl.jaas.config")).isTrue();
  }

  @Test
  void leavesOrdinaryKeysAlone() {
    assertThat(SecretMasker.isSecret("outbox-relay.pipelines.orders.database.user")).isFalse();
    assertThat(SecretMasker.isSecret("outbox-relay.pipelines.orders.database.url")).isFalse();
    assertThat(SecretMasker.isSecret("a.password-policy.min-length")).isFalse();
    assertThat(SecretMasker.isSecret("a.sasl.mechanism")).isFalse();
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

    String rendered = SecretMasker.mask(tree, "x").render();

    assertThat(rendered).doesNotContain("canary").doesNotContain("1234");
    assertThat(rendered).contains("amqp://u:******@h1").contains("app").contains("amqp://h2");
  }
}
