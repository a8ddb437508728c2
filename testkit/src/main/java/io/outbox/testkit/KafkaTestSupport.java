package io.outbox.testkit;

import static java.util.concurrent.TimeUnit.MILLISECONDS;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka helpers for integration tests against {@link Services#kafkaBootstrap()} (or, through the
 * overloads taking a bootstrap address, another cluster such as a {@link PrivateKafka}): unique
 * topic names, topic creation, a plain producer and a reader that consumes a topic from the
 * beginning without a consumer group.
 */
public final class KafkaTestSupport {
  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration POLL = Duration.ofMillis(200);
  private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(2);
  private static final Duration MARKER_GRACE = Duration.ofSeconds(5);

  private KafkaTestSupport() {}

  /** {@code prefix} plus a random suffix, e.g. {@code orders.it-4f1c9a2b}. */
  public static String uniqueTopic(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** Creates {@code topic} with {@code partitions} partitions (replication factor 1) and waits. */
  public static void createTopic(String topic, int partitions) {
    createTopic(bootstrap(), topic, partitions);
  }

  /** {@link #createTopic(String, int)} on the cluster at {@code bootstrap}. */
  public static void createTopic(String bootstrap, String topic, int partitions) {
    create(bootstrap, new NewTopic(topic, partitions, (short) 1), partitions + " partitions");
  }

  /**
   * Creates {@code topic} with {@code partitions} partitions (replication factor 1) and the topic
   * configs {@code configs} on the shared broker, and waits.
   */
  public static void createTopic(String topic, int partitions, Map<String, String> configs) {
    create(
        bootstrap(),
        new NewTopic(topic, partitions, (short) 1).configs(configs),
        String.valueOf(configs));
  }

  /**
   * Creates {@code topic} and waits until the broker's metadata names a leader for every partition:
   * the controller acknowledges the creation before the broker applied it, and a producer that
   * comes in between is refused for the partitions not yet led. One admin client for both.
   */
  private static void create(String bootstrap, NewTopic topic, String what) {
    String name = topic.name();
    withAdmin(
        bootstrap,
        "create topic " + name + " (" + what + ")",
        admin -> {
          long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
          admin.createTopics(List.of(topic)).all().get(ADMIN_TIMEOUT.toMillis(), MILLISECONDS);
          while (!led(admin, name)) {
            if (System.nanoTime() > deadline) {
              throw new TimeoutException("partitions without a leader after " + ADMIN_TIMEOUT);
            }
            Thread.sleep(20);
          }
          // The metadata can name a leader a moment before that broker serves the partition: a
          // produce then gets NOT_LEADER_OR_FOLLOWER, and an idempotent producer's next batches
          // OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout (seen once in KafkaSinkIT on a
          // loaded machine). A ListOffsets of every partition, which the admin client retries
          // until the leader itself answers, waits for that.
          Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
          for (int p = 0; p < topic.numPartitions(); p++) {
            latest.put(new TopicPartition(name, p), OffsetSpec.latest());
          }
          admin.listOffsets(latest).all().get(ADMIN_TIMEOUT.toMillis(), MILLISECONDS);
          return null;
        });
  }

  /** Sets the topic config {@code name} of {@code topic} on the shared broker to {@code value}. */
  public static void setTopicConfig(String topic, String name, String value) {
    AlterConfigOp set = new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET);
    onAdmin(
        bootstrap(),
        "set " + name + " of topic " + topic,
        admin ->
            admin
                .incrementalAlterConfigs(
                    Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic), List.of(set)))
                .all());
  }

  /** Whether {@code topic} exists on the broker. */
  public static boolean topicExists(String topic) {
    return topicExists(bootstrap(), topic);
  }

  /** Whether {@code topic} exists on the cluster at {@code bootstrap}. */
  public static boolean topicExists(String bootstrap, String topic) {
    return onAdmin(bootstrap, "list topics", admin -> admin.listTopics().names()).contains(topic);
  }

  /** Whether the broker knows {@code topic} and a leader for each of its partitions. */
  private static boolean led(Admin admin, String topic)
      throws InterruptedException, ExecutionException, TimeoutException {
    try {
      TopicDescription described =
          admin
              .describeTopics(List.of(topic))
              .allTopicNames()
              .get(ADMIN_TIMEOUT.toMillis(), MILLISECONDS)
              .get(topic);
      return described.partitions().stream()
          .allMatch(p -> p.leader() != null && !p.leader().isEmpty());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        return false; // not in the broker's metadata yet
      }
      throw e;
    }
  }

  /**
   * Sends one request with a new admin client of the cluster at {@code bootstrap} and waits for its
   * result (up to {@link #ADMIN_TIMEOUT}); {@code what} names the request in a failure.
   */
  private static <T> T onAdmin(
      String bootstrap, String what, Function<Admin, KafkaFuture<T>> request) {
    return withAdmin(
        bootstrap, what, admin -> request.apply(admin).get(ADMIN_TIMEOUT.toMillis(), MILLISECONDS));
  }

  /** What {@link #withAdmin} does with its admin client. */
  @FunctionalInterface
  private interface AdminWork<T> {
    T apply(Admin admin) throws InterruptedException, ExecutionException, TimeoutException;
  }

  /**
   * Runs {@code work} with a new admin client of the cluster at {@code bootstrap}; {@code what}
   * names it in a failure.
   */
  private static <T> T withAdmin(String bootstrap, String what, AdminWork<T> work) {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      return work.apply(admin);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(
          "interrupted while trying to " + what + " at " + bootstrap, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot " + what + " at " + bootstrap, e);
    }
  }

  /** A producer with String keys and byte[] values, {@code acks=all}; the caller closes it. */
  public static KafkaProducer<String, byte[]> producer() {
    return producer(bootstrap());
  }

  /** {@link #producer()} for the cluster at {@code bootstrap}. */
  public static KafkaProducer<String, byte[]> producer(String bootstrap) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ProducerConfig.ACKS_CONFIG,
            "all",
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
            true),
        new StringSerializer(),
        new ByteArraySerializer());
  }

  /**
   * Reads {@code topic} from the beginning of every partition until at least {@code expected}
   * records arrived or {@code timeout} passed, and returns what arrived: per partition in offset
   * order, possibly more than {@code expected}, fewer only on timeout. Waits (within the timeout)
   * for the topic to exist, but never creates it.
   */
  public static List<ConsumerRecord<String, byte[]>> readRecords(
      String topic, int expected, Duration timeout) {
    return readRecords(bootstrap(), topic, expected, timeout);
  }

  /** {@link #readRecords(String, int, Duration)} from the cluster at {@code bootstrap}. */
  public static List<ConsumerRecord<String, byte[]>> readRecords(
      String bootstrap, String topic, int expected, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<String, byte[]> consumer = reader(bootstrap)) {
      List<TopicPartition> partitions = awaitPartitions(consumer, topic, deadline);
      if (partitions.isEmpty()) {
        return records;
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      while (records.size() < expected && System.nanoTime() < deadline) {
        consumer.poll(POLL).forEach(records::add);
      }
    }
    return records;
  }

  /**
   * Reads every record of {@code topic} (which must exist) up to the end offsets it has when the
   * read starts, per partition in offset order; fails if that takes longer than {@code timeout}.
   * With read_committed, the end offsets are taken once every committed transaction's markers are
   * in (up to 5 s, then without the transactions still open). Unlike {@link #readRecords(String,
   * String, int, Duration)} it needs no expected count, so duplicates show without waiting out a
   * timeout.
   */
  public static List<ConsumerRecord<String, byte[]>> readToEnd(
      String bootstrap, String topic, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<String, byte[]> consumer = reader(bootstrap)) {
      List<TopicPartition> partitions = awaitPartitions(consumer, topic, deadline);
      if (partitions.isEmpty()) {
        throw new IllegalStateException(
            "topic " + topic + " not found at " + bootstrap + " within " + timeout);
      }
      Map<TopicPartition, Long> ends = stableEnds(consumer, bootstrap, partitions, deadline);
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      while (!reached(consumer, ends)) {
        if (System.nanoTime() >= deadline) {
          throw new IllegalStateException(
              "read "
                  + records.size()
                  + " records of topic "
                  + topic
                  + " at "
                  + bootstrap
                  + " but not up to its end offsets "
                  + ends
                  + " within "
                  + timeout);
        }
        consumer.poll(POLL).forEach(records::add);
      }
    }
    return records;
  }

  /**
   * The read_committed end offsets (last stable offsets) once they caught up with the high
   * watermarks, or after {@link #MARKER_GRACE} if they do not (a transaction still open, such as
   * one of a killed producer). A transaction's commit markers reach its partitions only after
   * {@code commitTransaction()} returned, so the last stable offset read right after a commit may
   * still stand before that transaction's records.
   */
  private static Map<TopicPartition, Long> stableEnds(
      KafkaConsumer<String, byte[]> consumer,
      String bootstrap,
      List<TopicPartition> partitions,
      long deadline) {
    long grace = Math.min(deadline, System.nanoTime() + MARKER_GRACE.toNanos());
    try (KafkaConsumer<String, byte[]> uncommitted = reader(bootstrap, "read_uncommitted")) {
      while (true) {
        Duration left = Duration.ofNanos(Math.max(deadline - System.nanoTime(), 1_000_000));
        Map<TopicPartition, Long> stable = consumer.endOffsets(partitions, left);
        if (stable.equals(uncommitted.endOffsets(partitions, left)) || System.nanoTime() >= grace) {
          return stable;
        }
        sleep(Duration.ofMillis(50));
      }
    }
  }

  private static boolean reached(
      KafkaConsumer<String, byte[]> consumer, Map<TopicPartition, Long> ends) {
    for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
      if (consumer.position(end.getKey()) < end.getValue()) {
        return false;
      }
    }
    return true;
  }

  /** The value of the record's last header named {@code name} as UTF-8, or null if absent. */
  public static String header(ConsumerRecord<?, ?> record, String name) {
    Header header = record.headers().lastHeader(name);
    return header == null || header.value() == null
        ? null
        : new String(header.value(), StandardCharsets.UTF_8);
  }

  /** The record's value as UTF-8 text. */
  public static String valueAsString(ConsumerRecord<?, byte[]> record) {
    return record.value() == null ? null : new String(record.value(), StandardCharsets.UTF_8);
  }

  private static List<TopicPartition> awaitPartitions(
      KafkaConsumer<String, byte[]> consumer, String topic, long deadline) {
    while (true) {
      try {
        List<PartitionInfo> infos = consumer.listTopics(METADATA_TIMEOUT).get(topic);
        if (infos != null && !infos.isEmpty()) {
          return infos.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
        }
      } catch (org.apache.kafka.common.errors.TimeoutException e) {
        // The broker did not answer in time; keep trying until the caller's deadline.
      }
      if (System.nanoTime() >= deadline) {
        return List.of();
      }
      sleep(POLL);
    }
  }

  private static KafkaConsumer<String, byte[]> reader(String bootstrap) {
    return reader(bootstrap, "read_committed");
  }

  private static KafkaConsumer<String, byte[]> reader(String bootstrap, String isolation) {
    // No group: partitions are assigned by hand, so there is no rebalance to wait for and
    // nothing is committed. Reading never auto-creates the topic.
    return new KafkaConsumer<>(
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
            false,
            ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG,
            false,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG,
            isolation,
            ConsumerConfig.CLIENT_ID_CONFIG,
            "outbox-testkit-reader-" + UUID.randomUUID().toString().substring(0, 8)),
        new StringDeserializer(),
        new ByteArrayDeserializer());
  }

  private static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a topic", e);
    }
  }

  private static String bootstrap() {
    return Services.kafkaBootstrap();
  }
}
