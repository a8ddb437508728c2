package io.outbox.sink.kafka;

import static io.outbox.sink.kafka.Contexts.context;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivateKafka;
import io.outbox.testkit.TestCertificates;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kafka sink over TLS, configured only through {@code producer { }} client properties, against
 * a private broker with an SSL listener and a SASL_SSL (SCRAM-SHA-512) listener whose certificate
 * comes from a throwaway CA.
 */
class KafkaTlsIT {

  private static final String SCRAM_USER = "relay";
  private static final String SCRAM_PASSWORD = "canary-scram-4e8c";

  @TempDir static Path dir;
  private static TestCertificates certificates;
  private static TestCertificates otherCa;
  private static PrivateKafka kafka;

  private final List<Sink> sinks = new ArrayList<>();

  @BeforeAll
  static void startBroker() {
    certificates =
        TestCertificates.create(dir.resolve("kafka"), "kafka", TestCertificates.LOOPBACK);
    otherCa = TestCertificates.create(dir.resolve("other"), "other", TestCertificates.LOOPBACK);
    kafka = PrivateKafka.startWithTls(certificates, Map.of(SCRAM_USER, SCRAM_PASSWORD));
  }

  @AfterAll
  static void stopBroker() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @AfterEach
  void closeSinks() {
    sinks.forEach(s -> s.close(Duration.ofSeconds(5)));
  }

  private Sink sink(String bootstrap, TestCertificates trusted, String producer) {
    Sink sink =
        KafkaSinkIT.provider()
            .create(
                context(
                    """
                    bootstrap-servers = "%s"
                    send-timeout = 10s
                    producer {
                      "ssl.truststore.type" = PKCS12
                      "ssl.truststore.location" = "%s"
                      "ssl.truststore.password" = "%s"
                      %s
                    }
                    """
                        .formatted(bootstrap, trusted.trustStore(), trusted.password(), producer)));
    sinks.add(sink);
    return sink;
  }

  private static String scram(String password) {
    return """
        "security.protocol" = SASL_SSL
        "sasl.mechanism" = SCRAM-SHA-512
        "sasl.jaas.config" = "org.apache.kafka.common.security.scram.ScramLoginModule required username=\\"%s\\" password=\\"%s\\";"
        """
        .formatted(SCRAM_USER, password);
  }

  /** Publishes two events and checks they arrived (read back on the PLAINTEXT listener). */
  private static void assertPublishes(Sink sink) throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("tls");
    KafkaTestSupport.createTopic(kafka.bootstrap(), topic, 1);
    List<RoutedEvent> batch =
        List.of(Events.routed(topic, "o-1", "{\"n\":1}"), Events.routed(topic, "o-2", "{\"n\":2}"));

    List<Verdict> verdicts = KafkaSinkIT.publish(sink, batch);

    assertThat(verdicts).extracting(Verdict::outcome).containsOnly(Outcome.PUBLISHED);
    assertThat(KafkaTestSupport.readRecords(kafka.bootstrap(), topic, 2, Duration.ofSeconds(30)))
        .extracting(r -> UUID.fromString(KafkaTestSupport.header(r, "event-id")))
        .containsExactly(batch.get(0).event().eventId(), batch.get(1).event().eventId());
  }

  private static Verdict publishOne(Sink sink) throws Exception {
    return KafkaSinkIT.publish(sink, List.of(Events.routed("tls.none", "o-1", "{}"))).get(0);
  }

  @Test
  void publishesOverSslVerifyingTheBrokersCertificateAndHostName() throws Exception {
    Sink sink = sink(kafka.sslBootstrap(), certificates, "\"security.protocol\" = SSL");
    assertThat(sink.probe(Duration.ofSeconds(30))).isTrue();
    assertPublishes(sink);
  }

  @Test
  void publishesOverSaslSslWithScramSha512() throws Exception {
    Sink sink = sink(kafka.saslSslBootstrap(), certificates, scram(SCRAM_PASSWORD));
    assertThat(sink.probe(Duration.ofSeconds(30))).isTrue();
    assertPublishes(sink);
  }

  @Test
  void aWrongScramPasswordIsRefusedWithoutShowingIt() throws Exception {
    String wrong = SCRAM_PASSWORD + "-wrong";
    Sink sink = sink(kafka.saslSslBootstrap(), certificates, scram(wrong));

    assertThat(sink.probe(Duration.ofSeconds(30))).isFalse();
    Verdict verdict = publishOne(sink);

    assertThat(verdict.outcome()).isNotEqualTo(Outcome.PUBLISHED);
    assertThat(verdict.error())
        .containsIgnoringCase("authentication")
        .doesNotContain(SCRAM_PASSWORD);
  }

  @Test
  void aBrokerCertificateFromAnotherCaIsRefused() throws Exception {
    Sink sink = sink(kafka.sslBootstrap(), otherCa, "\"security.protocol\" = SSL");

    assertThat(sink.probe(Duration.ofSeconds(30))).isFalse();
    Verdict verdict = publishOne(sink);

    assertThat(verdict.outcome()).isNotEqualTo(Outcome.PUBLISHED);
    assertThat(verdict.error()).containsIgnoringCase("SSL");
  }
}
