package io.outbox.sink.kafka;

import io.outbox.relay.spi.Sink;
import io.outbox.testkit.BackdatingInterceptor;
import io.outbox.testkit.Delivered;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.LocalPorts;
import io.outbox.testkit.Services;
import io.outbox.testkit.SinkContexts;
import io.outbox.testkit.SinkContract;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** The Kafka sink passes the sink contract against the broker of {@code scripts/services.sh}. */
class KafkaSinkContractIT extends SinkContract {

  private static final long ONE_HOUR_MS = 3_600_000;

  @Override
  protected String newDestination() {
    String topic = KafkaTestSupport.uniqueTopic("outbox.contract.it");
    KafkaTestSupport.createTopic(topic, 3);
    return topic;
  }

  @Override
  protected Sink newSink(String extraSettings) {
    return create("bootstrap-servers = \"" + Services.kafkaBootstrap() + "\"\n" + extraSettings);
  }

  @Override
  protected Sink newUnreachableSink() throws Exception {
    return create(
        "bootstrap-servers = \"127.0.0.1:" + LocalPorts.unbound() + "\"\nsend-timeout = 2s");
  }

  /**
   * A topic that refuses records older than an hour ({@code message.timestamp.before.max.ms}), and
   * a producer interceptor that back-dates one record in {@link BackdatingInterceptor#EVERY} by a
   * day: the broker refuses that record (INVALID_TIMESTAMP) and nothing else. One record per
   * produce batch ({@code batch.size = 0}), so that a key's next records are in the partition's
   * next requests, in flight (up to 5) while the refused one is answered.
   */
  @Override
  protected Refusing refusingDestination() {
    String topic = KafkaTestSupport.uniqueTopic("outbox.contract.refusing");
    KafkaTestSupport.createTopic(
        topic, 3, Map.of("message.timestamp.before.max.ms", String.valueOf(ONE_HOUR_MS)));
    return new Refusing(
        topic,
        "producer.interceptor.classes = \""
            + BackdatingInterceptor.class.getName()
            + "\"\nproducer.batch.size = 0\nproducer.linger.ms = 0",
        0,
        true);
  }

  @Override
  protected List<Delivered> readToEnd(String topic) {
    return KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, READ_TIMEOUT).stream()
        .map(KafkaSinkContractIT::delivered)
        .toList();
  }

  @Override
  protected String invalidDestination() {
    return "bad topic!";
  }

  @Override
  protected String slowFlushSettings() {
    return "producer.linger.ms = 500";
  }

  @Override
  protected List<Delivered> read(String topic, int expected, Duration timeout) {
    return KafkaTestSupport.readRecords(topic, expected, timeout).stream()
        .map(KafkaSinkContractIT::delivered)
        .toList();
  }

  private static Delivered delivered(ConsumerRecord<String, byte[]> record) {
    Map<String, String> headers = new LinkedHashMap<>();
    for (Header h : record.headers()) {
      headers.put(
          h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
    }
    return new Delivered(
        headers.get("event-id"),
        record.key(),
        headers.get("event-type"),
        headers,
        record.value(),
        null);
  }

  private static Sink create(String hocon) {
    return SinkContexts.sink(KafkaSinkProvider.TYPE, hocon);
  }
}
