package io.outbox.relay.demo;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** The demo's consumer: reads the topic, notes first arrival, duplicates and key order. */
final class DemoConsumer implements AutoCloseable {
  private static final int PARTITIONS = 3;
  private final Map<UUID, Long> firstSeen = new ConcurrentHashMap<>();
  private final AtomicLong duplicates = new AtomicLong();
  private final AtomicLong orderViolations = new AtomicLong();
  private final Map<String, Long> lastOrderIdByKey = new HashMap<>();
  private final Thread thread;
  private volatile boolean running = true;

  private DemoConsumer(String bootstrap, String topic) {
    thread = new Thread(() -> consume(bootstrap, topic), "demo-consumer");
    thread.setDaemon(true);
  }

  static DemoConsumer start(String bootstrap, String topic) throws Exception {
    Properties admin = new Properties();
    admin.put("bootstrap.servers", bootstrap);
    try (Admin a = Admin.create(admin)) {
      a.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
    }
    DemoConsumer c = new DemoConsumer(bootstrap, topic);
    c.thread.start();
    return c;
  }

  private void consume(String bootstrap, String topic) {
    Properties p = new Properties();
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
          long now = System.nanoTime();
          Header h = r.headers().lastHeader("event-id");
          if (h == null) {
            continue;
          }
          UUID id = UUID.fromString(new String(h.value(), StandardCharsets.UTF_8));
          if (firstSeen.putIfAbsent(id, now) != null) {
            duplicates.incrementAndGet();
          } else {
            checkOrder(r);
          }
        }
      }
    }
  }

  /** OrderCreated must reach the consumer before OrderConfirmed of the same order. */
  private void checkOrder(ConsumerRecord<String, byte[]> r) {
    Header type = r.headers().lastHeader("event-type");
    boolean confirmed =
        type != null && "OrderConfirmed".equals(new String(type.value(), StandardCharsets.UTF_8));
    Long seen = lastOrderIdByKey.get(r.key());
    if (confirmed && seen == null) {
      orderViolations.incrementAndGet();
    }
    lastOrderIdByKey.put(r.key(), confirmed ? 2L : 1L);
  }

  boolean receivedAll(Set<UUID> ids) {
    return firstSeen.keySet().containsAll(ids);
  }

  boolean has(UUID id) {
    return firstSeen.containsKey(id);
  }

  long firstSeenNanos(UUID id) {
    return firstSeen.get(id);
  }

  long distinct() {
    return firstSeen.size();
  }

  long duplicates() {
    return duplicates.get();
  }

  long orderViolations() {
    return orderViolations.get();
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
