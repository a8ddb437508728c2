package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SecretKeys.Answer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;

class KafkaSecretKeysTest {

  private final SecretKeys keys = new KafkaSinkProvider().secretKeys();

  @Test
  void everyPropertyTheClientDeclaresAsPasswordIsSecretExceptPublicCertificates() {
    assertThat(keys.of("producer.ssl.keystore.key")).isEqualTo(Answer.SECRET);
    assertThat(keys.of("producer.ssl.key.password")).isEqualTo(Answer.SECRET);
    assertThat(keys.of("producer.ssl.keystore.password")).isEqualTo(Answer.SECRET);
    assertThat(keys.of("producer.ssl.truststore.password")).isEqualTo(Answer.SECRET);
    assertThat(keys.of("producer.sasl.jaas.config")).isEqualTo(Answer.SECRET);
    assertThat(keys.of("producer.sasl.oauthbearer.assertion.private.key.passphrase"))
        .isEqualTo(Answer.SECRET);
    assertThat(keys.of("producer.ssl.truststore.certificates")).isEqualTo(Answer.NOT_SECRET);
    assertThat(keys.of("producer.ssl.keystore.certificate.chain")).isEqualTo(Answer.NOT_SECRET);
    ProducerConfig.configDef().configKeys().values().stream()
        .filter(k -> k.type == ConfigDef.Type.PASSWORD)
        .filter(k -> !ProducerProperties.PUBLIC_CERTIFICATES.contains(k.name))
        .forEach(
            k -> assertThat(keys.of("producer." + k.name)).as(k.name).isEqualTo(Answer.SECRET));
  }

  @Test
  void declaredPropertiesOfOtherTypesAreNotSecretWhateverTheirName() {
    assertThat(keys.of("producer.sasl.oauthbearer.token.endpoint.url"))
        .isEqualTo(Answer.NOT_SECRET);
    assertThat(keys.of("producer.sasl.oauthbearer.client.credentials.client.id"))
        .isEqualTo(Answer.NOT_SECRET);
    assertThat(keys.of("producer.linger.ms")).isEqualTo(Answer.NOT_SECRET);
    assertThat(keys.of("bootstrap-servers")).isEqualTo(Answer.NOT_SECRET);
  }

  @Test
  void propertiesTheClientDoesNotDeclareAreLeftToTheRelay() {
    assertThat(keys.of("producer.my.login.module.secret")).isEqualTo(Answer.UNKNOWN);
  }
}
