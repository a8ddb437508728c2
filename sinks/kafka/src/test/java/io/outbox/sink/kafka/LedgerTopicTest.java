package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.Test;

class LedgerTopicTest {

  @Test
  void theLedgerReaderTakesTheProducersConnectionSettingsButNotItsInterceptors() {
    Map<String, Object> consumer =
        LedgerTopic.consumerConfig(
            Map.of(
                "bootstrap.servers", "broker:9092",
                "security.protocol", "SSL",
                "client.id", "outbox-relay-orders",
                "interceptor.classes", "com.example.TracingProducerInterceptor",
                "linger.ms", "5"));

    assertThat(consumer)
        .containsEntry("bootstrap.servers", "broker:9092")
        .containsEntry("security.protocol", "SSL")
        .containsEntry(ConsumerConfig.CLIENT_ID_CONFIG, "outbox-relay-orders-ledger")
        .containsEntry(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")
        .doesNotContainKey(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG)
        .doesNotContainKey("linger.ms")
        .doesNotContainKey(ConsumerConfig.GROUP_ID_CONFIG);
  }
}
