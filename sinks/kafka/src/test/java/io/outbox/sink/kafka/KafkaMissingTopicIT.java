package io.outbox.sink.kafka;

import static io.outbox.sink.kafka.Contexts.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivateKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A topic the producer cannot find is dead-lettered only when the broker confirms that it does not
 * exist and will not be created; metadata that is merely late or a broker that does not answer is
 * never permanent. Against a private broker with {@code auto.create.topics.enable=false} (the
 * shared one auto-creates topics).
 */
class KafkaMissingTopicIT {

  private static PrivateKafka kafka;
  private final List<Sink> sinks = new ArrayList<>();

  @BeforeAll
  static void startBroker() {
    kafka = PrivateKafka.startWith(Map.of("auto.create.topics.enable", "false"));
  }

  @AfterAll
  static void stopBroker() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @AfterEach
  void closeSinks() {
    sinks.forEach(s -> s.close(Duration.ofSeconds(5)));
  }

  private Sink sink(String hocon) {
    Sink sink =
        KafkaSinkIT.provider()
            .create(context("bootstrap-servers = \"" + kafka.bootstrap() + "\"\n" + hocon));
    sinks.add(sink);
    return sink;
  }

  private static RoutedEvent routed(String topic, String key) {
    return new RoutedEvent(
        Events.event(key, key.getBytes(StandardCharsets.UTF_8), Map.of()), topic);
  }

  private static List<Outcome> outcomes(List<Verdict> verdicts) {
    return verdicts.stream().map(Verdict::outcome).toList();
  }

  @Test
  void aMissingTopicTheBrokerDoesNotCreateIsPermanentWhileOtherTopicsArePublished()
      throws Exception {
    String existing = KafkaTestSupport.uniqueTopic("outbox.missing.it.ok");
    String missing = KafkaTestSupport.uniqueTopic("outbox.missing.it.gone");
    KafkaTestSupport.createTopic(kafka.bootstrap(), existing, 1);
    // max.block.ms = 2 s: the producer waits that long for the missing topic's metadata, then the
    // broker is asked whether the topic exists and whether it would create it.
    Sink sink = sink("send-timeout = 4s\nprobe-timeout = 2s");
    long start = System.nanoTime();

    List<Verdict> verdicts =
        KafkaSinkIT.publish(
            sink, List.of(routed(missing, "a"), routed(existing, "b"), routed(missing, "c")));

    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.PERMANENT, Outcome.PUBLISHED, Outcome.PERMANENT);
    assertThat(verdicts.get(0).error())
        .contains("'" + missing + "'")
        .contains("does not exist and the broker does not auto-create topics");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
    assertThat(KafkaTestSupport.topicExists(kafka.bootstrap(), missing)).isFalse();
    assertThat(KafkaTestSupport.readRecords(kafka.bootstrap(), existing, 1, Duration.ofSeconds(30)))
        .hasSize(1);
  }

  @Test
  void aMetadataTimeoutForATopicThatExistsIsNotPermanentAndPassesLater() throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("outbox.missing.it.late");
    KafkaTestSupport.createTopic(kafka.bootstrap(), topic, 1);
    // max.block.ms = 0: a send never waits for metadata, so the first send to a topic the
    // producer has no metadata for yet times out at once, exactly as a slow metadata answer does.
    Sink sink = sink("send-timeout = 5s\nproducer { \"max.block.ms\" = 0 }");

    List<Verdict> first = KafkaSinkIT.publish(sink, List.of(routed(topic, "a")));

    assertThat(outcomes(first)).containsExactly(Outcome.SINK_UNAVAILABLE);
    assertThat(first.get(0).error())
        .contains("'" + topic + "'")
        .contains("the topic exists")
        .contains("not present in metadata");
    // The metadata the producer asked for arrives: the same event is published.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                KafkaSinkIT.publish(sink, List.of(routed(topic, "a"))).get(0).outcome()
                    == Outcome.PUBLISHED);
  }

  @Test
  void aBrokerThatDoesNotAnswerMakesAMissingTopicUnavailableNotPermanent() throws Exception {
    String missing = KafkaTestSupport.uniqueTopic("outbox.missing.it.frozen");
    Sink sink = sink("send-timeout = 4s\nprobe-timeout = 2s");
    kafka.freeze();
    try {
      List<Verdict> verdicts =
          KafkaSinkIT.publish(sink, List.of(routed(missing, "a"), routed(missing, "b")));

      assertThat(outcomes(verdicts)).containsOnly(Outcome.SINK_UNAVAILABLE);
    } finally {
      kafka.thaw();
    }
    // Once the broker answers again, the same missing topic is confirmed and dead-lettered.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                KafkaSinkIT.publish(sink, List.of(routed(missing, "a"))).get(0).outcome()
                    == Outcome.PERMANENT);
  }
}
