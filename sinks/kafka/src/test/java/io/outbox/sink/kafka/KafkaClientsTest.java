package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.Ticker;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.Producer;
import org.junit.jupiter.api.Test;

class KafkaClientsTest {

  @Test
  void aFailedProbeLeavesTheNextOneAFreshAdminClient() {
    AtomicInteger admins = new AtomicInteger();
    FakeClients fakes = new FakeClients(true);
    KafkaClients.Factory factory =
        new KafkaClients.Factory() {
          @Override
          public Producer<String, byte[]> producer(Map<String, Object> config) {
            return fakes.producer(config);
          }

          @Override
          public Admin admin(Map<String, Object> config) {
            admins.incrementAndGet();
            return KafkaClients.KAFKA.admin(config);
          }
        };
    // Nothing listens on port 1: every probe fails.
    Map<String, Object> admin =
        Map.of(
            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1",
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 200,
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 200);
    KafkaClients clients = new KafkaClients("p", Map.of(), admin, factory, Ticker.SYSTEM);
    try {
      assertThat(clients.clusterAnswers(Duration.ofMillis(200))).isFalse();
      assertThat(clients.clusterAnswers(Duration.ofMillis(200))).isFalse();

      assertThat(admins).hasValue(2);
    } finally {
      clients.close(Duration.ofSeconds(1));
    }
  }
}
