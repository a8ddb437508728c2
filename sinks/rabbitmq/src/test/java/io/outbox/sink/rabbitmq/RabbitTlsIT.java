package io.outbox.sink.rabbitmq;

import static io.outbox.sink.rabbitmq.Contexts.context;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.GetResponse;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.testkit.PrivateRabbit;
import io.outbox.testkit.TestCertificates;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The RabbitMQ sink over amqps against a private RabbitMQ node whose only listener is TLS, with a
 * throwaway CA. The server certificate names {@code DNS:localhost} only, so that connecting to
 * {@code 127.0.0.1} is a host name mismatch.
 */
class RabbitTlsIT {

  private static final String CANARY = "canary-rabbit-tls-7f3a";

  @TempDir static Path dir;
  private static TestCertificates certificates;
  private static TestCertificates otherCa;
  private static PrivateRabbit rabbit;

  @RegisterExtension final RabbitSinks rabbitmq = new RabbitSinks();

  @BeforeAll
  static void startBroker() {
    certificates = TestCertificates.create(dir.resolve("broker"), "rabbit", "DNS:localhost");
    otherCa = TestCertificates.create(dir.resolve("other"), "other", TestCertificates.LOOPBACK);
    rabbit = PrivateRabbit.start(certificates);
  }

  @AfterAll
  static void stopBroker() {
    if (rabbit != null) {
      rabbit.close();
    }
  }

  private String settings(String host, TestCertificates trusted, String extra) {
    return """
        uri = "%s"
        trust-store = "%s"
        trust-store-password = "%s"
        connection-timeout = 5s
        %s
        """
        .formatted(rabbit.uri(host), trusted.trustStore(), trusted.password(), extra);
  }

  @Test
  void publishesOverAmqpsTrustingTheConfiguredCaAndVerifyingTheHostName() throws Exception {
    String exchange = RabbitAdmin.unique("outbox.tls");
    String hocon =
        settings("localhost", certificates, "declare { \"" + exchange + "\" { type = topic } }");
    Sink sink = rabbitmq.sinkWith(hocon);
    assertThat(sink.probe(Duration.ofSeconds(20))).isTrue();
    try (RabbitAdmin admin =
        new RabbitAdmin(
            RabbitConnection.factory(
                SettingsReader.settings(
                    context(hocon), RabbitSinkSettings::read, "rabbitmq sink")))) {
      String queue = admin.queue(RabbitAdmin.unique("q.tls"), exchange, "#");
      List<RoutedEvent> batch =
          List.of(
              Events.routed(exchange, "o-1", "{\"n\":1}"),
              Events.routed(exchange, "o-2", "{\"n\":2}"));

      List<Verdict> verdicts = RabbitSinkIT.publish(sink, batch);

      assertThat(RabbitSinkIT.outcomes(verdicts))
          .containsExactly(Outcome.PUBLISHED, Outcome.PUBLISHED);
      List<GetResponse> received = admin.read(queue, 2, Duration.ofSeconds(30));
      assertThat(received)
          .extracting(r -> r.getProps().getMessageId())
          .containsExactlyInAnyOrder(
              batch.get(0).event().eventId().toString(), batch.get(1).event().eventId().toString());
    }
  }

  @Test
  void aBrokerCertificateFromAnotherCaIsRefusedWithoutShowingThePassword() throws Exception {
    Sink sink = rabbitmq.sinkWith(settings("localhost", otherCa, "password = \"" + CANARY + "\""));

    assertThat(sink.probe(Duration.ofSeconds(20))).isFalse();
    Verdict verdict =
        RabbitSinkIT.publish(sink, List.of(Events.routed("outbox.tls.x", "o-1", "{}"))).get(0);

    assertThat(verdict.outcome()).isEqualTo(Outcome.SINK_UNAVAILABLE);
    assertThat(verdict.error())
        .contains("cannot reach RabbitMQ")
        .containsIgnoringCase("certificat")
        .doesNotContain(CANARY);
  }

  @Test
  void theJvmsDefaultTrustStoreDoesNotTrustAPrivateCa() throws Exception {
    Sink sink =
        rabbitmq.sinkWith("uri = \"" + rabbit.uri("localhost") + "\"\nconnection-timeout = 5s");

    Verdict verdict =
        RabbitSinkIT.publish(sink, List.of(Events.routed("outbox.tls.x", "o-1", "{}"))).get(0);

    assertThat(verdict.outcome()).isEqualTo(Outcome.SINK_UNAVAILABLE);
    assertThat(verdict.error()).containsIgnoringCase("certificat");
  }

  @Test
  void aHostNameTheCertificateDoesNotNameIsRefused() throws Exception {
    Sink sink = rabbitmq.sinkWith(settings("127.0.0.1", certificates, ""));

    Verdict verdict =
        RabbitSinkIT.publish(sink, List.of(Events.routed("outbox.tls.x", "o-1", "{}"))).get(0);

    assertThat(verdict.outcome()).isEqualTo(Outcome.SINK_UNAVAILABLE);
    assertThat(verdict.error()).contains("127.0.0.1").containsIgnoringCase("subject alternative");
  }
}
