package io.outbox.bench;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The consumer of the latency run: records, per event id, the {@link System#nanoTime} at which the
 * event first arrived (from the {@code event-id} header or the RabbitMQ {@code message_id}).
 */
abstract class Receiver implements AutoCloseable {
  private final Map<UUID, Long> firstSeen = new ConcurrentHashMap<>();

  /**
   * A consumer of the run's topic (from its end), of the queue bound to the run's exchange, of the
   * run's JetStream stream (new messages) or of the run's Redis stream (entries after its last).
   */
  static Receiver start(String sink, Brokers brokers) throws Exception {
    return switch (sink) {
      case "rabbitmq" -> new Rabbit(brokers);
      case "nats" -> new StreamReceivers.Nats(brokers);
      case "redis" -> new StreamReceivers.Redis(brokers);
      default -> new Kafka(brokers);
    };
  }

  @Override
  public abstract void close() throws IOException;

  /** When {@code id} first arrived, or null. */
  Long firstSeenNanos(UUID id) {
    return firstSeen.get(id);
  }

  final void seen(String id, long nanos) {
    if (id != null) {
      firstSeen.putIfAbsent(UUID.fromString(id), nanos);
    }
  }

  /**
   * A receiver reading on a daemon thread of its own: {@link #readOnce} in a loop until {@link
   * #close}, then {@link #stop} on that thread.
   */
  abstract static class Looping extends Receiver {
    private final AtomicBoolean running = new AtomicBoolean(true);
    private Thread thread;

    /** Starts the thread; call last in the subclass's constructor. */
    final void start(String name) {
      thread =
          new Thread(
              () -> {
                while (running.get()) {
                  readOnce();
                }
                stop();
              },
              name);
      thread.setDaemon(true);
      thread.start();
    }

    /** Reads what arrived, waiting about 100 ms at most. */
    abstract void readOnce();

    /** Releases the client, on the reading thread. */
    abstract void stop();

    @Override
    public final void close() {
      running.set(false);
      try {
        thread.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static final class Kafka extends Looping {
    private final KafkaConsumer<byte[], byte[]> consumer;

    Kafka(Brokers brokers) {
      Map<String, Object> props =
          Map.of(
              ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
              brokers.kafkaBootstrap(),
              ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
              ByteArrayDeserializer.class.getName(),
              ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
              ByteArrayDeserializer.class.getName(),
              ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG,
              "5",
              ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
              "false",
              // Committed records only, as an exactly-once consumer reads (--relay-config
              // "sink.kafka.delivery = exactly-once"); the same for an idempotent producer.
              ConsumerConfig.ISOLATION_LEVEL_CONFIG,
              "read_committed");
      consumer = new KafkaConsumer<>(props);
      List<TopicPartition> partitions =
          IntStream.range(0, brokers.partitions())
              .mapToObj(p -> new TopicPartition(brokers.destination(), p))
              .collect(Collectors.toList());
      consumer.assign(partitions);
      consumer.seekToEnd(partitions);
      // Resolve the end offsets now, before any event of the run is written.
      partitions.forEach(consumer::position);
      start("bench-kafka-receiver");
    }

    @Override
    void readOnce() {
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
        long now = System.nanoTime();
        Header h = r.headers().lastHeader("event-id");
        seen(h == null ? null : new String(h.value(), StandardCharsets.UTF_8), now);
      }
    }

    @Override
    void stop() {
      consumer.close();
    }
  }

  private static final class Rabbit extends Receiver {
    private final Connection connection;

    Rabbit(Brokers brokers) throws Exception {
      connection = brokers.rabbitConnection("bench-receiver");
      Channel ch = connection.createChannel();
      ch.queuePurge(brokers.destination());
      ch.basicConsume(
          brokers.destination(),
          true,
          (tag, delivery) -> seen(delivery.getProperties().getMessageId(), System.nanoTime()),
          tag -> {});
    }

    @Override
    public void close() throws IOException {
      connection.close();
    }
  }
}
