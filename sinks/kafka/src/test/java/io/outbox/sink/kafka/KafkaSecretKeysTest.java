package io.outbox.sink.kafka;

import io.outbox.testkit.SecretKeyAnswers;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;

class KafkaSecretKeysTest {

  private final SecretKeyAnswers answers =
      SecretKeyAnswers.of(new KafkaSinkProvider().secretKeys());

  @Test
  void everyPropertyTheClientDeclaresAsPasswordIsSecretExceptPublicCertificates() {
    answers
        .secret(
            "producer.ssl.keystore.key",
            "producer.ssl.key.password",
            "producer.ssl.keystore.password",
            "producer.ssl.truststore.password",
            "producer.sasl.jaas.config",
            "producer.sasl.oauthbearer.assertion.private.key.passphrase")
        .notSecret(
            "producer.ssl.truststore.certificates", "producer.ssl.keystore.certificate.chain");
    ProducerConfig.configDef().configKeys().values().stream()
        .filter(k -> k.type == ConfigDef.Type.PASSWORD)
        .filter(k -> !ProducerProperties.PUBLIC_CERTIFICATES.contains(k.name))
        .forEach(k -> answers.secret("producer." + k.name));
  }

  @Test
  void declaredPropertiesOfOtherTypesAreNotSecretWhateverTheirName() {
    answers.notSecret(
        "producer.sasl.oauthbearer.token.endpoint.url",
        "producer.sasl.oauthbearer.client.credentials.client.id",
        "producer.linger.ms",
        "bootstrap-servers");
  }

  @Test
  void propertiesTheClientDoesNotDeclareAreLeftToTheRelay() {
    answers.unknown("producer.my.login.module.secret");
  }
}
