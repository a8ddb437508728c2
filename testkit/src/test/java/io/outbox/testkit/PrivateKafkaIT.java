package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** A private broker starts, keeps its data across a kill and restart, stops, and cleans up. */
class PrivateKafkaIT {
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

  @Test
  void keepsRecordsAcrossAKillAndRestartsOnTheSamePorts() throws Exception {
    Path dir;
    try (PrivateKafka kafka = PrivateKafka.start()) {
      dir = kafka.directory();
      assertThat(kafka.bootstrap()).isNotEqualTo(Services.kafkaBootstrap());
      assertThatThrownBy(kafka::restart).hasMessageContaining("still running");
      String topic = KafkaTestSupport.uniqueTopic("private-kafka-it");
      KafkaTestSupport.createTopic(kafka.bootstrap(), topic, 2);
      send(kafka, topic, "before-kill");

      kafka.kill();
      assertThat(kafka.isRunning()).isFalse();
      assertThat(accepts(kafka.bootstrap())).as("port closed while killed").isFalse();

      kafka.restart();
      assertThat(kafka.isRunning()).isTrue();
      send(kafka, topic, "after-restart");
      assertThat(KafkaTestSupport.readToEnd(kafka.bootstrap(), topic, READ_TIMEOUT))
          .extracting(KafkaTestSupport::valueAsString)
          .containsExactlyInAnyOrder("before-kill", "after-restart");

      kafka.stop();
      assertThat(accepts(kafka.bootstrap())).as("port closed while stopped").isFalse();
      assertThatCode(kafka::stop).as("stopping twice").doesNotThrowAnyException();
      assertThat(Files.readString(dir.resolve("kafka.log"))).contains("Kafka Server started");
    }
    assertThat(dir).doesNotExist();
  }

  @Test
  void clientsOfTheProxiedListenerReachTheLeaderThroughTheProxyOnly() throws Exception {
    try (PrivateKafka kafka = PrivateKafka.startBehindProxy()) {
      assertThat(kafka.proxiedBootstrap()).isEqualTo(kafka.proxy().address());
      String topic = KafkaTestSupport.uniqueTopic("private-kafka-proxied-it");
      KafkaTestSupport.createTopic(kafka.bootstrap(), topic, 1);
      int before = kafka.proxy().acceptedConnections();
      try (KafkaProducer<String, byte[]> producer =
          KafkaTestSupport.producer(kafka.proxiedBootstrap())) {
        producer.send(new ProducerRecord<>(topic, "k", new byte[] {1})).get();
        // Bootstrap, then the leader at its advertised address: both through the proxy.
        assertThat(kafka.proxy().acceptedConnections() - before).isGreaterThanOrEqualTo(2);
        assertThat(kafka.proxy().openConnections()).isPositive();
      }
      assertThat(KafkaTestSupport.readToEnd(kafka.bootstrap(), topic, READ_TIMEOUT)).hasSize(1);
    }
  }

  private static void send(PrivateKafka kafka, String topic, String value) throws Exception {
    try (KafkaProducer<String, byte[]> producer = KafkaTestSupport.producer(kafka.bootstrap())) {
      producer.send(new ProducerRecord<>(topic, "k", value.getBytes(StandardCharsets.UTF_8))).get();
    }
  }

  private static boolean accepts(String bootstrap) {
    String[] hostPort = bootstrap.split(":");
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])), 1_000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
