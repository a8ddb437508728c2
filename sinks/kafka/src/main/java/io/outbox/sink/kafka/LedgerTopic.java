package io.outbox.sink.kafka;

import static io.outbox.sink.kafka.KafkaTimeouts.left;
import static io.outbox.sink.kafka.KafkaTimeouts.ms;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.LedgerEntry;
import io.outbox.relay.spi.LedgerException;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.LedgerRead;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ledger topic of an exactly-once pipeline: made sure of on activation (created when missing,
 * refused when compacted or with fewer partitions than lanes), and read back with {@code
 * read_committed} past the offsets the database settled.
 */
final class LedgerTopic {

  private static final Logger log = LoggerFactory.getLogger(LedgerTopic.class);
  private static final String CLEANUP_POLICY = "cleanup.policy";

  private final String topic;
  private final String pipeline;
  private final Duration retention;
  private final Map<String, Object> consumerConfig;
  private final KafkaClients clients;
  private final Ticker ticker;

  LedgerTopic(
      String topic,
      String pipeline,
      Duration retention,
      Map<String, Object> producerConfig,
      KafkaClients clients,
      Ticker ticker) {
    this.topic = topic;
    this.ticker = ticker;
    this.pipeline = pipeline;
    this.retention = retention;
    this.clients = clients;
    this.consumerConfig = consumerConfig(producerConfig);
  }

  /**
   * The ledger reader's configuration: the producer's connection and security settings that a
   * consumer knows, but not its plug-ins ({@code interceptor.classes} names producer interceptors,
   * which a consumer cannot load: the reader failed to start), read_committed, no group.
   */
  static Map<String, Object> consumerConfig(Map<String, Object> producerConfig) {
    Map<String, Object> config = new HashMap<>();
    producerConfig.forEach(
        (name, value) -> {
          if (ConsumerConfig.configNames().contains(name)
              && !name.equals(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG)) {
            config.put(name, value);
          }
        });
    config.put(
        ConsumerConfig.CLIENT_ID_CONFIG,
        producerConfig.get(ProducerProperties.CLIENT_ID) + "-ledger");
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    // A deleted ledger must stay missing (and be reported), not come back empty.
    config.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    config.remove(ConsumerConfig.GROUP_ID_CONFIG);
    return Map.copyOf(config);
  }

  String name() {
    return topic;
  }

  /**
   * Creates the topic with one partition per lane when it is missing; checks an existing one.
   *
   * @return its partitions: one per lane of the pipeline now or of a former configuration with more
   *     lanes
   * @throws LedgerException when the topic is compacted or has fewer partitions than lanes
   * @throws IllegalStateException when the broker does not answer within {@code timeout}
   */
  int ensure(int lanes, Duration timeout) {
    Admin admin = clients.admin();
    try {
      TopicDescription d;
      try {
        d =
            admin
                .describeTopics(List.of(topic))
                .allTopicNames()
                .get(ms(timeout), TimeUnit.MILLISECONDS)
                .get(topic);
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
          throw e;
        }
        create(admin, lanes, timeout);
        return lanes;
      }
      if (d.partitions().size() < lanes) {
        throw new LedgerException(
            "pipeline "
                + pipeline
                + ": the ledger topic '"
                + topic
                + "' has "
                + d.partitions().size()
                + " partition(s) but the pipeline runs "
                + lanes
                + " lanes (one partition per lane); add partitions (kafka-topics --alter"
                + " --partitions "
                + lanes
                + ") or lower lanes");
      }
      ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      Config config =
          admin
              .describeConfigs(List.of(resource))
              .all()
              .get(ms(timeout), TimeUnit.MILLISECONDS)
              .get(resource);
      ConfigEntry policy = config == null ? null : config.get(CLEANUP_POLICY);
      if (policy != null && policy.value() != null && policy.value().contains("compact")) {
        throw new LedgerException(
            "pipeline "
                + pipeline
                + ": the ledger topic '"
                + topic
                + "' has cleanup.policy="
                + policy.value()
                + "; compaction may drop ledger records not yet settled (their key is the lane), so"
                + " the relay would re-send published events. Set cleanup.policy=delete"
                + " (docs/design.md, \"Exactly once into Kafka\")");
      }
      return d.partitions().size();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while checking the ledger topic", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException(
          "the ledger topic '" + topic + "' cannot be checked: " + FailureClassifier.describe(e),
          e);
    }
  }

  private void create(Admin admin, int lanes, Duration timeout)
      throws InterruptedException, ExecutionException, TimeoutException {
    NewTopic t =
        new NewTopic(topic, Optional.of(lanes), Optional.empty())
            .configs(
                Map.of(
                    CLEANUP_POLICY,
                    "delete",
                    "retention.ms",
                    String.valueOf(retention.toMillis())));
    try {
      admin.createTopics(List.of(t)).all().get(ms(timeout), TimeUnit.MILLISECONDS);
      log.info(
          "pipeline {}: created the ledger topic '{}' ({} partitions, retention {} ms)",
          pipeline,
          topic,
          lanes,
          retention.toMillis());
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw e;
      }
    }
  }

  /**
   * A read of the ledger: the records to trust ({@link LedgerRead}), and the positions of those a
   * distrust marker dropped (their batches are {@link BatchFate.State#DISTRUSTED}).
   */
  record Read(LedgerRead read, Set<LedgerPosition> distrusted) {

    Read {
      distrusted = Set.copyOf(distrusted);
    }
  }

  /**
   * The committed ledger records past {@code settled}, up to the current end (the last stable
   * offsets, which it reports too), less those a distrust marker follows.
   *
   * @throws LedgerException when the ledger cannot be trusted
   * @throws IllegalStateException when the broker does not answer within {@code timeout}
   */
  Read read(Map<Integer, Long> settled, Duration timeout) {
    Deadline deadline = ticker.deadline(timeout);
    try (Consumer<String, byte[]> consumer =
        new KafkaConsumer<>(
            consumerConfig, new StringDeserializer(), new ByteArrayDeserializer())) {
      List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
      if (infos == null || infos.isEmpty()) {
        if (settled.isEmpty()) {
          return new Read(new LedgerRead(List.of(), Map.of()), Set.of());
        }
        throw gone("does not exist", settled);
      }
      List<TopicPartition> partitions = new ArrayList<>();
      infos.forEach(i -> partitions.add(new TopicPartition(topic, i.partition())));
      for (Integer p : settled.keySet()) {
        if (p >= partitions.size()) {
          throw gone("has no partition " + p, settled);
        }
      }
      consumer.assign(partitions);
      Map<TopicPartition, Long> begin = consumer.beginningOffsets(partitions, left(deadline));
      // read_committed: the end is the last stable offset, past every transaction decided.
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, left(deadline));
      List<TopicPartition> pending = new ArrayList<>();
      for (TopicPartition tp : partitions) {
        long from = start(tp, settled.get(tp.partition()), begin.get(tp), end.get(tp), settled);
        if (from < end.get(tp)) {
          consumer.seek(tp, from);
          pending.add(tp);
        }
      }
      consumer.assign(pending);
      List<LedgerEntry> entries = new ArrayList<>();
      Set<LedgerPosition> distrusted = new HashSet<>();
      while (!pending.isEmpty()) {
        if (deadline.passed()) {
          throw new IllegalStateException(
              "reading the ledger topic '"
                  + topic
                  + "' took longer than "
                  + timeout.toMillis()
                  + " ms");
        }
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          TopicPartition tp = new TopicPartition(r.topic(), r.partition());
          if (r.offset() >= end.get(tp)) {
            continue;
          }
          if (LedgerCodec.isDistrust(r.value())) {
            distrust(entries, r).forEach(e -> distrusted.add(e.position()));
          } else {
            entries.add(new LedgerEntry(new LedgerPosition(r.partition(), r.offset()), decode(r)));
          }
        }
        pending.removeIf(tp -> consumer.position(tp, left(deadline)) >= end.get(tp));
        consumer.assign(pending);
      }
      entries.sort(
          (a, b) ->
              a.position().partition() != b.position().partition()
                  ? Integer.compare(a.position().partition(), b.position().partition())
                  : Long.compare(a.position().offset(), b.position().offset()));
      Map<Integer, Long> decidedTo = new HashMap<>();
      end.forEach((tp, offset) -> decidedTo.put(tp.partition(), offset));
      return new Read(new LedgerRead(entries, decidedTo), distrusted);
    }
  }

  /** Where reading a partition starts; checks that nothing unsettled was lost. */
  private long start(
      TopicPartition tp, Long settled, long begin, long end, Map<Integer, Long> all) {
    if (settled == null) {
      return begin;
    }
    if (end <= settled) {
      throw gone(
          "partition "
              + tp.partition()
              + " ends at offset "
              + end
              + ", before the settled offset "
              + settled,
          all);
    }
    // The settled record's transaction wrote one record to this partition, so its commit marker is
    // at settled + 1; anything from settled + 2 on may be unsettled.
    if (begin > settled + 2) {
      throw new LedgerException(
          "pipeline "
              + pipeline
              + ": the ledger topic '"
              + topic
              + "' partition "
              + tp.partition()
              + " starts at offset "
              + begin
              + " but only offsets up to "
              + settled
              + " were settled: records not yet settled expired (retention shorter than the"
              + " relay's downtime) or were deleted. Their events may be in Kafka already. To"
              + " recover: decide from the consumers' side which events were delivered, then"
              + " DELETE FROM <table>_relay_ledger WHERE pipeline = '"
              + pipeline
              + "' to restart from the ledger's beginning (what is unsettled is then published"
              + " again, at least once); docs/operations.md");
    }
    return settled + 1;
  }

  private LedgerException gone(String what, Map<Integer, Long> settled) {
    return new LedgerException(
        "pipeline "
            + pipeline
            + ": the ledger topic '"
            + topic
            + "' "
            + what
            + ", although the database settled it up to "
            + settled
            + ": it was deleted or recreated, so whether the last batches reached Kafka is"
            + " unknown. To recover: check the consumers for the events still unpublished in the"
            + " outbox, then DELETE FROM <table>_relay_ledger WHERE pipeline = '"
            + pipeline
            + "' (the relay then starts the ledger afresh; unsettled events are published again,"
            + " at least once); docs/design.md");
  }

  /**
   * A distrust marker: drops the records of its partition read before it (past the watermark), so
   * that their events are sent again rather than settled on the ledger's word (at least once).
   */
  private List<LedgerEntry> distrust(
      List<LedgerEntry> entries, ConsumerRecord<String, byte[]> marker) {
    List<LedgerEntry> dropped =
        entries.stream()
            .filter(
                e ->
                    e.position().partition() == marker.partition()
                        && e.position().offset() < marker.offset())
            .toList();
    entries.removeAll(dropped);
    if (!dropped.isEmpty()) {
      log.warn(
          "pipeline {}: the ledger's records at partition {} offsets {} are not trusted (a"
              + " distrust marker at offset {}: a hanging transaction of the lane was aborted that"
              + " the ledger had decided apart); their {} events are sent again: {} {}",
          pipeline,
          marker.partition(),
          dropped.stream().map(e -> e.position().offset()).toList(),
          marker.offset(),
          dropped.stream().mapToInt(e -> e.record().events().size()).sum(),
          KafkaSinkProvider.SENT_TWICE,
          dropped.stream()
              .flatMap(e -> e.record().events().stream())
              .map(LedgerRecord.Event::eventId)
              .toList());
    }
    return dropped;
  }

  private LedgerRecord decode(ConsumerRecord<String, byte[]> r) {
    try {
      return LedgerCodec.decode(r.value());
    } catch (RuntimeException e) {
      throw new LedgerException(
          "pipeline "
              + pipeline
              + ": the ledger topic '"
              + topic
              + "' holds an unreadable record at partition "
              + r.partition()
              + " offset "
              + r.offset()
              + " ("
              + e.getMessage()
              + "); is the topic shared with something else? The relay stops rather than guess"
              + " what was published",
          e);
    }
  }
}
