package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Everything on a topic, read from the beginning to the end offsets of the moment, per partition in
 * offset order; and the checks of the at-least-once contract on it.
 */
final class Deliveries {
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

  final List<ConsumerRecord<String, byte[]>> records;
  private final Map<UUID, List<ConsumerRecord<String, byte[]>>> byEventId = new LinkedHashMap<>();

  private Deliveries(List<ConsumerRecord<String, byte[]>> records) {
    this.records = records;
    for (ConsumerRecord<String, byte[]> r : records) {
      byEventId
          .computeIfAbsent(
              UUID.fromString(KafkaTestSupport.header(r, "event-id")), k -> new ArrayList<>())
          .add(r);
    }
  }

  /** Reads {@code topic} up to the end offsets it has now (the topic must exist). */
  static Deliveries readAll(String topic) {
    return readAll(Services.kafkaBootstrap(), topic);
  }

  /** As {@link #readAll(String)}, from the broker at {@code bootstrap}. */
  static Deliveries readAll(String bootstrap, String topic) {
    List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<String, byte[]> consumer = consumer(bootstrap)) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic, READ_TIMEOUT).stream()
              .map(p -> new TopicPartition(topic, p.partition()))
              .toList();
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, READ_TIMEOUT);
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, List<ConsumerRecord<String, byte[]>>> byPartition = new LinkedHashMap<>();
      long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
      while (!reached(consumer, end)) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError(
              "could not read " + topic + " up to its end offsets " + end + " in " + READ_TIMEOUT);
        }
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          TopicPartition tp = new TopicPartition(r.topic(), r.partition());
          if (r.offset() < end.get(tp)) {
            byPartition.computeIfAbsent(tp, k -> new ArrayList<>()).add(r);
          }
        }
      }
      byPartition.values().forEach(records::addAll);
    }
    return new Deliveries(records);
  }

  private static boolean reached(
      KafkaConsumer<String, byte[]> consumer, Map<TopicPartition, Long> end) {
    for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
      if (consumer.position(e.getKey()) < e.getValue()) {
        return false;
      }
    }
    return true;
  }

  private static KafkaConsumer<String, byte[]> consumer(String bootstrap) {
    return new KafkaConsumer<>(
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
            false,
            ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG,
            false,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG,
            "read_committed",
            ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
            5000),
        new StringDeserializer(),
        new ByteArrayDeserializer());
  }

  /** The distinct event ids delivered. */
  Set<UUID> eventIds() {
    return new HashSet<>(byEventId.keySet());
  }

  /** How many records repeat an event already delivered. */
  int duplicates() {
    return records.size() - byEventId.size();
  }

  /** The partitions that hold a repeated delivery. */
  Set<Integer> duplicatePartitions() {
    Set<Integer> out = new java.util.TreeSet<>();
    byEventId.forEach(
        (id, copies) -> {
          for (int i = 1; i < copies.size(); i++) {
            out.add(copies.get(i).partition());
          }
        });
    return out;
  }

  /**
   * Where the repeated deliveries are: per partition, the offset ranges of the first copies and of
   * the repeats (for a failure message).
   */
  String duplicateCopies() {
    Map<Integer, long[]> first = new java.util.TreeMap<>();
    Map<Integer, long[]> repeats = new java.util.TreeMap<>();
    byEventId.forEach(
        (id, copies) -> {
          for (int i = 0; i < copies.size() && copies.size() > 1; i++) {
            ConsumerRecord<String, byte[]> r = copies.get(i);
            long[] range =
                (i == 0 ? first : repeats)
                    .computeIfAbsent(r.partition(), k -> new long[] {Long.MAX_VALUE, -1, 0});
            range[0] = Math.min(range[0], r.offset());
            range[1] = Math.max(range[1], r.offset());
            range[2]++;
          }
        });
    StringBuilder b = new StringBuilder();
    first.forEach(
        (partition, range) -> {
          long[] again = repeats.get(partition);
          b.append(
              String.format(
                  "partition %d: %d first copies at offsets %d-%d, repeated at %d-%d; ",
                  partition, range[2], range[0], range[1], again[0], again[1]));
        });
    return b.toString();
  }

  /**
   * Asserts the at-least-once contract: every committed event delivered, nothing else delivered,
   * and every repeated delivery identical to the first (key, value, every header: same event-id
   * with the same content).
   */
  void assertEveryEventDeliveredAndDuplicatesIdentical(Collection<UUID> committed) {
    Set<UUID> missing = new HashSet<>(committed);
    missing.removeAll(byEventId.keySet());
    assertThat(missing).as("committed events missing on the topic").isEmpty();
    Set<UUID> unexpected = new HashSet<>(byEventId.keySet());
    unexpected.removeAll(new HashSet<>(committed));
    assertThat(unexpected).as("delivered events that were never committed").isEmpty();
    List<String> different = new ArrayList<>();
    byEventId.forEach(
        (id, copies) -> {
          ConsumerRecord<String, byte[]> first = copies.get(0);
          for (ConsumerRecord<String, byte[]> copy : copies.subList(1, copies.size())) {
            boolean same =
                first.key().equals(copy.key())
                    && Arrays.equals(first.value(), copy.value())
                    && Arrays.asList(first.headers().toArray())
                        .equals(Arrays.asList(copy.headers().toArray()))
                    && first.partition() == copy.partition();
            if (!same) {
              different.add(id + " at offsets " + first.offset() + " and " + copy.offset());
            }
          }
        });
    assertThat(different).as("duplicates that differ from the first delivery").isEmpty();
  }
}
