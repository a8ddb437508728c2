package io.outbox.relay.demo;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads the demo topic from the beginning of each partition, without a consumer group; with {@code
 * isolation.level = read_committed} for {@code demo --exactly-once}, so that records of aborted
 * transactions are never seen.
 */
final class KafkaDemoConsumer extends DemoConsumer {
  private static final int PARTITIONS = 3;

  private final Thread thread;
  private volatile boolean running = true;

  private KafkaDemoConsumer(String bootstrap, String topic, boolean readCommitted) {
    thread = new Thread(() -> consume(bootstrap, topic, readCommitted), "demo-consumer");
    thread.setDaemon(true);
  }

  /** Creates the topic, then starts reading it. */
  static KafkaDemoConsumer start(String bootstrap, String topic, boolean readCommitted)
      throws Exception {
    Properties admin = new Properties();
    admin.put("bootstrap.servers", bootstrap);
    try (Admin a = Admin.create(admin)) {
      a.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
    }
    KafkaDemoConsumer c = new KafkaDemoConsumer(bootstrap, topic, readCommitted);
    c.thread.start();
    return c;
  }

  private void consume(String bootstrap, String topic, boolean readCommitted) {
    Properties p = new Properties();
    if (readCommitted) {
      p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    }
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p)) {
      // No consumer group: the partitions are assigned by hand, nothing waits for a rebalance.
      List<TopicPartition> partitions = new ArrayList<>();
      for (int i = 0; i < PARTITIONS; i++) {
        partitions.add(new TopicPartition(topic, i));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      while (running) {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(50))) {
          received(header(r.headers(), "event-id"), r.key(), header(r.headers(), "event-type"));
        }
      }
    }
  }

  private static String header(Headers headers, String name) {
    Header h = headers.lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    running = false;
    try {
      thread.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
