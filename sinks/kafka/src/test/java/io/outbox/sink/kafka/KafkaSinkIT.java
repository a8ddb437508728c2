package io.outbox.sink.kafka;

import static io.outbox.sink.kafka.Contexts.PATH;
import static io.outbox.sink.kafka.Contexts.context;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.LocalPorts;
import io.outbox.testkit.Services;
import io.outbox.testkit.SinkContexts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The Kafka sink against the real broker of {@code scripts/services.sh}. */
class KafkaSinkIT {

  private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

  private final List<Sink> sinks = new ArrayList<>();

  @AfterEach
  void closeSinks() {
    sinks.forEach(s -> s.close(Duration.ofSeconds(5)));
  }

  static SinkProvider provider() {
    return SinkContexts.provider(KafkaSinkProvider.TYPE);
  }

  private Sink sink(String hocon) {
    Sink sink =
        provider()
            .create(context("bootstrap-servers = \"" + Services.kafkaBootstrap() + "\"\n" + hocon));
    sinks.add(sink);
    return sink;
  }

  static List<Verdict> publish(Sink sink, List<RoutedEvent> batch) throws Exception {
    return sink.publish(batch).toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static List<Outcome> outcomes(List<Verdict> verdicts) {
    return verdicts.stream().map(Verdict::outcome).toList();
  }

  private static RoutedEvent routed(String topic, String key, byte[] payload) {
    return new RoutedEvent(Events.event(key, payload, Map.of()), topic);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Keys that the producer's default partitioner puts on every one of {@code partitions}. */
  private static List<String> keysCoveringPartitions(int partitions) {
    Map<Integer, String> byPartition = new LinkedHashMap<>();
    for (int i = 0; byPartition.size() < partitions; i++) {
      String key = "order-" + i;
      byPartition.putIfAbsent(Utils.toPositive(Utils.murmur2(bytes(key))) % partitions, key);
    }
    List<String> keys = new ArrayList<>(byPartition.values());
    keys.add("order-ü-" + keys.size()); // a non-ASCII key too
    return keys;
  }

  private static Map<String, String> headers(ConsumerRecord<String, byte[]> record) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Header h : record.headers()) {
      out.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
    }
    return out;
  }

  @Test
  void aConsumerSeesKeyValueAndHeadersExactlyInPerKeyOrderAcrossPartitions() throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("outbox.order.it");
    KafkaTestSupport.createTopic(topic, 3);
    Sink sink = sink("");
    List<String> keys = keysCoveringPartitions(3);
    List<RoutedEvent> batch = new ArrayList<>();
    for (int seq = 0; seq < 10; seq++) {
      for (String key : keys) {
        byte[] payload = bytes("{\"key\":\"" + key + "\",\"seq\":" + seq + "}");
        OutboxEvent event = Events.event(key, payload, Map.of("trace-id", "t-" + seq));
        batch.add(new RoutedEvent(event, topic, Map.of("x-extra", "e")));
      }
    }

    List<Verdict> verdicts = publish(sink, batch);

    assertThat(outcomes(verdicts)).hasSize(batch.size()).containsOnly(Outcome.PUBLISHED);
    List<ConsumerRecord<String, byte[]>> records =
        KafkaTestSupport.readRecords(topic, batch.size(), READ_TIMEOUT);
    assertThat(records).hasSize(batch.size());
    Map<String, OutboxEvent> byEventId = new HashMap<>();
    batch.forEach(r -> byEventId.put(r.event().eventId().toString(), r.event()));
    Map<String, Set<Integer>> partitionsByKey = new HashMap<>();
    Map<String, List<Long>> idsByKey = new HashMap<>();
    for (ConsumerRecord<String, byte[]> record : records) {
      Map<String, String> headers = headers(record);
      OutboxEvent event = byEventId.get(headers.get("event-id"));
      assertThat(event).as("event of record %s", headers).isNotNull();
      assertThat(record.key()).isEqualTo(event.aggregateId());
      assertThat(record.value()).isEqualTo(event.payload());
      assertThat(headers)
          .containsExactly(
              Map.entry("event-id", event.eventId().toString()),
              Map.entry("event-type", "OrderCreated"),
              Map.entry("aggregate-type", "order"),
              Map.entry("aggregate-id", event.aggregateId()),
              Map.entry("created-at", "2024-05-01T10:15:30.123456Z"),
              Map.entry("x-extra", "e"),
              Map.entry("trace-id", event.headers().get("trace-id")));
      partitionsByKey.computeIfAbsent(record.key(), k -> new HashSet<>()).add(record.partition());
      idsByKey.computeIfAbsent(record.key(), k -> new ArrayList<>()).add(event.id());
    }
    // readRecords returns each partition in offset order: a key's ids must ascend.
    assertThat(partitionsByKey.values()).allSatisfy(p -> assertThat(p).hasSize(1));
    assertThat(idsByKey).hasSize(keys.size());
    assertThat(idsByKey.values()).allSatisfy(ids -> assertThat(ids).isSorted().hasSize(10));
    assertThat(records.stream().map(ConsumerRecord::partition).distinct()).hasSize(3);
  }

  @Test
  void concurrentLanesKeepEachKeysOrder() throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("outbox.lanes.it");
    KafkaTestSupport.createTopic(topic, 3);
    Sink sink = sink("");
    int lanes = 4;
    int batches = 5;
    int perBatch = 100;
    List<CompletableFuture<Void>> laneRuns = new ArrayList<>();
    for (int lane = 0; lane < lanes; lane++) {
      int l = lane;
      laneRuns.add(
          CompletableFuture.runAsync(
              () -> {
                for (int b = 0; b < batches; b++) {
                  List<RoutedEvent> batch = new ArrayList<>();
                  for (int i = 0; i < perBatch; i++) {
                    int seq = b * perBatch + i;
                    batch.add(routed(topic, "lane-" + l + "-key-" + (i % 7), bytes("" + seq)));
                  }
                  try {
                    assertThat(outcomes(publish(sink, batch))).containsOnly(Outcome.PUBLISHED);
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                }
              }));
    }
    CompletableFuture.allOf(laneRuns.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);

    int total = lanes * batches * perBatch;
    List<ConsumerRecord<String, byte[]>> records =
        KafkaTestSupport.readRecords(topic, total, READ_TIMEOUT);
    assertThat(records).hasSize(total);
    Map<String, List<Integer>> seqByKey = new HashMap<>();
    for (ConsumerRecord<String, byte[]> r : records) {
      seqByKey
          .computeIfAbsent(r.key(), k -> new ArrayList<>())
          .add(Integer.parseInt(new String(r.value(), StandardCharsets.UTF_8)));
    }
    assertThat(seqByKey).hasSize(lanes * 7);
    assertThat(seqByKey.values()).allSatisfy(seqs -> assertThat(seqs).isSorted());
  }

  @Test
  void aRecordLargerThanTheLimitIsPermanentWhileTheOthersArePublished() throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("outbox.large.it");
    KafkaTestSupport.createTopic(topic, 1);
    Sink sink = sink("");
    byte[] large = new byte[2 * 1024 * 1024];

    List<Verdict> verdicts =
        publish(
            sink,
            List.of(
                routed(topic, "a", bytes("small-1")),
                routed(topic, "b", large),
                routed(topic, "c", bytes("small-2"))));

    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.PUBLISHED, Outcome.PERMANENT, Outcome.PUBLISHED);
    assertThat(verdicts.get(1).error())
        .startsWith("topic '" + topic + "': record of 2097")
        .contains("too large")
        .contains("1048576");
    assertThat(KafkaTestSupport.readRecords(topic, 2, READ_TIMEOUT))
        .extracting(KafkaTestSupport::valueAsString)
        .containsExactly("small-1", "small-2");
  }

  @Test
  void aRecordTheBrokerRefusesAsTooLargeIsPermanent() throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("outbox.broker-large.it");
    KafkaTestSupport.createTopic(topic, 1);
    // The client would take 5 MiB; the broker's message.max.bytes (~1 MiB) refuses it.
    Sink sink = sink("producer { max.request.size = 5242880 }");
    byte[] large = new byte[1536 * 1024];

    List<Verdict> verdicts =
        publish(
            sink,
            List.of(
                routed(topic, "a", bytes("small-1")),
                routed(topic, "b", large),
                routed(topic, "c", bytes("small-2"))));

    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.PUBLISHED, Outcome.PERMANENT, Outcome.PUBLISHED);
    assertThat(verdicts.get(1).error())
        .startsWith("topic '" + topic + "': record of 1573")
        .contains("too large")
        .contains("max.message.bytes");
    assertThat(KafkaTestSupport.readRecords(topic, 2, READ_TIMEOUT))
        .extracting(KafkaTestSupport::valueAsString)
        .containsExactly("small-1", "small-2");
  }

  @Test
  void anInvalidTopicNameIsPermanent() throws Exception {
    String good = KafkaTestSupport.uniqueTopic("outbox.good.it");
    KafkaTestSupport.createTopic(good, 1);
    Sink sink = sink("");
    String tooLong = "t".repeat(250);

    List<Verdict> verdicts =
        publish(
            sink,
            List.of(
                routed("bad topic!", "a", bytes("1")),
                routed(good, "b", bytes("2")),
                routed(tooLong, "c", bytes("3"))));

    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.PERMANENT, Outcome.PUBLISHED, Outcome.PERMANENT);
    assertThat(verdicts.get(0).error()).contains("'bad topic!'");
    assertThat(verdicts.get(2).error()).contains("250 characters");
  }

  @Test
  void aTopicThatDoesNotExistYetIsCreatedByTheBroker() throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("outbox.auto.it");
    Sink sink = sink("");
    assertThat(outcomes(publish(sink, List.of(routed(topic, "a", bytes("1"))))))
        .containsExactly(Outcome.PUBLISHED);
    assertThat(KafkaTestSupport.readRecords(topic, 1, READ_TIMEOUT)).hasSize(1);
  }

  @Test
  void anUnreachableBrokerMakesTheBatchUnavailableWithinSendTimeout() throws Exception {
    Sink sink =
        provider()
            .create(
                context(
                    "bootstrap-servers = \"127.0.0.1:"
                        + LocalPorts.unbound()
                        + "\"\nsend-timeout = 2s"));
    sinks.add(sink);
    long start = System.nanoTime();

    List<Verdict> verdicts =
        publish(
            sink,
            List.of(
                routed("outbox.a", "a", bytes("1")),
                routed("outbox.b", "b", bytes("2")),
                routed("outbox.a", "c", bytes("3"))));

    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertThat(outcomes(verdicts)).containsOnly(Outcome.SINK_UNAVAILABLE).hasSize(3);
    assertThat(verdicts.get(0).error()).contains("'outbox.a'");
    assertThat(took).isLessThan(Duration.ofSeconds(5));

    start = System.nanoTime();
    assertThat(sink.probe(Duration.ofSeconds(1))).isFalse();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
  }

  @Test
  void probeIsTrueWhenTheClusterAnswers() {
    assertThat(sink("").probe(Duration.ofSeconds(10))).isTrue();
  }

  @Test
  void closeWaitsForRecordsInFlight() throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("outbox.close.it");
    KafkaTestSupport.createTopic(topic, 1);
    Sink sink =
        provider()
            .create(
                context(
                    "bootstrap-servers = \""
                        + Services.kafkaBootstrap()
                        + "\"\nproducer.linger.ms = 500"));
    assertThat(outcomes(publish(sink, List.of(routed(topic, "a", bytes("warm-up"))))))
        .containsExactly(Outcome.PUBLISHED);
    CompletableFuture<List<Verdict>> stage =
        sink.publish(List.of(routed(topic, "a", bytes("1")), routed(topic, "b", bytes("2"))))
            .toCompletableFuture();

    sink.close(Duration.ofSeconds(10));

    assertThat(outcomes(stage.get(10, TimeUnit.SECONDS)))
        .containsExactly(Outcome.PUBLISHED, Outcome.PUBLISHED);
  }

  @Test
  void anAcksOverrideIsAProblemNamingTheFullKeyPath() {
    List<SettingsProblem> problems = provider().validate(context("producer.acks = 1"));
    assertThat(problems)
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.path()).isEqualTo(PATH + ".producer.acks");
              assertThat(p.path()).isEqualTo("outbox-relay.pipelines.p.sink.kafka.producer.acks");
              assertThat(p.message()).contains("got 1");
            });
  }
}
