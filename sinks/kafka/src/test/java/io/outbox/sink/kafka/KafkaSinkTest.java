package io.outbox.sink.kafka;

import static io.outbox.sink.kafka.Contexts.context;
import static io.outbox.sink.kafka.Events.routed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.sink.kafka.FakeClients.ScriptedProducer;
import io.outbox.testkit.FakeTime;
import io.outbox.testkit.SinkContexts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidTimestampException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class KafkaSinkTest {

  private FakeClients clients = new FakeClients(false);
  private final ScriptedBroker broker = new ScriptedBroker();
  private KafkaSink sink = sink("");

  private KafkaSink sink(String hocon) {
    return KafkaSinkProvider.create(context(hocon), clients, broker);
  }

  @AfterEach
  void close() {
    sink.close(Duration.ofSeconds(1));
  }

  private static List<Verdict> verdicts(CompletableFuture<List<Verdict>> stage) throws Exception {
    return stage.get(10, TimeUnit.SECONDS);
  }

  private static List<Outcome> outcomes(List<Verdict> verdicts) {
    return verdicts.stream().map(Verdict::outcome).toList();
  }

  private CompletableFuture<List<Verdict>> publish(RoutedEvent... events) {
    return sink.publish(List.of(events)).toCompletableFuture();
  }

  @Test
  void completesOnlyOnceEveryRecordIsAcknowledged() throws Exception {
    CompletableFuture<List<Verdict>> stage =
        publish(routed("t", "a", "1"), routed("t", "b", "2"), routed("t", "a", "3"));
    ScriptedProducer producer = clients.last();
    assertThat(producer.completeNext()).isTrue();
    assertThat(producer.completeNext()).isTrue();
    assertThat(stage).isNotDone();
    assertThat(producer.completeNext()).isTrue();
    assertThat(outcomes(verdicts(stage))).containsOnly(Outcome.PUBLISHED).hasSize(3);
  }

  @Test
  void sendsRecordsInBatchOrderThroughOneSharedProducer() throws Exception {
    clients = new FakeClients(true);
    sink = sink("");
    verdicts(publish(routed("t", "a", "1"), routed("t", "a", "2")));
    verdicts(publish(routed("u", "a", "3")));
    assertThat(clients.producers).hasSize(1);
    assertThat(clients.last().history())
        .extracting(ProducerRecord::topic, r -> new String(r.value()))
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("t", "1"),
            org.assertj.core.groups.Tuple.tuple("t", "2"),
            org.assertj.core.groups.Tuple.tuple("u", "3"));
  }

  @Test
  void aRecordKafkaRefusesFailsAloneWhileTheOthersArePublished() throws Exception {
    CompletableFuture<List<Verdict>> stage =
        publish(routed("t", "a", "1"), routed("t", "b", "2"), routed("t", "c", "3"));
    ScriptedProducer producer = clients.last();
    producer.completeNext();
    producer.errorNext(new RecordTooLargeException("The request included a message larger..."));
    producer.completeNext();
    List<Verdict> verdicts = verdicts(stage);
    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.PUBLISHED, Outcome.PERMANENT, Outcome.PUBLISHED);
    assertThat(verdicts.get(1).error()).startsWith("topic 't': record of ").contains("too large");
  }

  @Test
  void unacknowledgedRecordsAreUnavailableOnceSendTimeoutExpires() throws Exception {
    sink = sink("send-timeout = 300ms");
    long start = System.nanoTime();
    CompletableFuture<List<Verdict>> stage = publish(routed("t", "a", "1"), routed("t", "b", "2"));
    clients.last().completeNext();
    List<Verdict> verdicts = verdicts(stage);
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isGreaterThanOrEqualTo(Duration.ofMillis(290))
        .isLessThan(Duration.ofSeconds(5));
    assertThat(outcomes(verdicts)).containsExactly(Outcome.PUBLISHED, Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(1).error())
        .isEqualTo("topic 't': not acknowledged by Kafka within send-timeout (300 ms)");
    clients.last().completeNext(); // a late acknowledgement changes nothing
    assertThat(verdicts(stage)).isEqualTo(verdicts);
  }

  /**
   * The send-timeout is measured on the relay's ticker: a producer that blocks in {@code send}
   * (waiting for metadata) past it leaves the rest of the batch unsent and unavailable. On a driven
   * clock, without waiting for the timeout.
   */
  @Test
  void theRestOfABatchIsNotSentOnceSendTimeoutPassedWhileSending() throws Exception {
    FakeTime time = new FakeTime();
    sink =
        KafkaSinkProvider.create(
            SinkContexts.context("kafka", "send-timeout = 30s", 4, time, time), clients, broker);
    clients.onSend = () -> time.advance(Duration.ofSeconds(30)); // blocked the whole send-timeout
    CompletableFuture<List<Verdict>> stage =
        publish(routed("t", "a", "1"), routed("t", "b", "2"), routed("u", "c", "3"));
    assertThat(clients.last().history()).hasSize(1);
    clients.last().completeNext();
    List<Verdict> verdicts = verdicts(stage);
    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.PUBLISHED, Outcome.SINK_UNAVAILABLE, Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(1).error())
        .isEqualTo(
            "not sent after an earlier failure: topic 't': send-timeout (30000 ms) expired before"
                + " the producer took the record");
  }

  @Test
  void anInvalidTopicIsPermanentAndNeverSent() throws Exception {
    clients = new FakeClients(true);
    sink = sink("");
    List<Verdict> verdicts =
        verdicts(
            publish(routed("t", "a", "1"), routed("bad/topic", "b", "2"), routed("t", "c", "3")));
    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.PUBLISHED, Outcome.PERMANENT, Outcome.PUBLISHED);
    assertThat(verdicts.get(1).error()).contains("'bad/topic'");
    assertThat(clients.last().history()).extracting(ProducerRecord::topic).containsOnly("t");
  }

  @Test
  void aFailureInsideSendHoldsBackLaterEventsOfTheSameAggregate() throws Exception {
    publishOnce();
    ScriptedProducer producer = clients.last();
    producer.failInSend.put("isr", new NotEnoughReplicasException("not enough replicas"));
    CompletableFuture<List<Verdict>> stage =
        publish(routed("isr", "a", "1"), routed("t", "a", "2"), routed("t", "b", "3"));
    producer.completeNext();
    List<Verdict> verdicts = verdicts(stage);
    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.RETRYABLE, Outcome.RETRYABLE, Outcome.PUBLISHED);
    assertThat(verdicts.get(1).error())
        .startsWith("not sent: an earlier event of the same aggregate failed: topic 'isr'");
    assertThat(producer.history()).extracting(r -> new String(r.value())).containsExactly("0", "3");
  }

  @Test
  void whenKafkaDoesNotAnswerTheRestOfTheBatchIsNotSent() throws Exception {
    publishOnce();
    ScriptedProducer producer = clients.last();
    producer.failInSend.put(
        "t1", new TimeoutException("Topic t1 not present in metadata after 300 ms."));
    broker.topicFailures.put("t1", new TimeoutException("Timed out waiting for a node"));
    List<Verdict> verdicts =
        verdicts(publish(routed("t1", "a", "1"), routed("t2", "b", "2"), routed("t1", "c", "3")));
    assertThat(outcomes(verdicts)).containsOnly(Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(1).error()).startsWith("not sent after an earlier failure: topic 't1'");
    assertThat(producer.attempts("t1")).isEqualTo(1);
    assertThat(producer.attempts("t2")).isZero();
  }

  @Test
  void aMissingTopicFailsItsEventsPermanentlyWithoutWaitingForEach() throws Exception {
    List<Verdict> verdicts = publishToATopicTheProducerCannotFind();
    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.PERMANENT, Outcome.PUBLISHED, Outcome.PERMANENT);
    assertThat(verdicts.get(2).error())
        .contains("'gone'")
        .contains("does not exist and the broker does not auto-create topics");
    assertThat(clients.last().attempts("gone")).isEqualTo(1);
    assertThat(broker.topicQuestions).hasValue(1);
  }

  @Test
  void aTopicTheProducerCannotFindButTheBrokerKnowsIsUnavailableNotPermanent() throws Exception {
    broker.existing.add("gone");
    List<Verdict> verdicts = publishToATopicTheProducerCannotFind();
    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.SINK_UNAVAILABLE, Outcome.PUBLISHED, Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(0).error()).contains("'gone'").contains("the topic exists");
    assertThat(clients.last().attempts("gone")).isEqualTo(1);
  }

  @Test
  void aMissingTopicTheBrokerWouldCreateIsUnavailableNotPermanent() throws Exception {
    broker.autoCreates = true;
    assertThat(outcomes(publishToATopicTheProducerCannotFind()))
        .containsExactly(Outcome.SINK_UNAVAILABLE, Outcome.PUBLISHED, Outcome.SINK_UNAVAILABLE);
  }

  @Test
  void aMissingTopicIsNotPermanentWhenTheBrokerDoesNotAnswerTheCheck() throws Exception {
    broker.topicFailures.put("gone", new TimeoutException("Timed out waiting for a node"));
    List<Verdict> verdicts = publishToATopicTheProducerCannotFind();
    // No answer at all: the whole sink, the rest of the batch is not sent.
    assertThat(outcomes(verdicts)).containsOnly(Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(0).error()).contains("nor to whether the topic exists");
  }

  @Test
  void anUnknownPartitionReportedByTheIoThreadIsCheckedWithoutBlockingIt() throws Exception {
    publishOnce();
    ScriptedProducer producer = clients.last();
    CompletableFuture<List<Verdict>> stage =
        publish(routed("gone", "a", "1"), routed("gone", "b", "2"));
    producer.errorNext(new UnknownTopicOrPartitionException("This server does not host it"));
    producer.errorNext(new UnknownTopicOrPartitionException("This server does not host it"));
    List<Verdict> verdicts = verdicts(stage);
    assertThat(outcomes(verdicts)).containsOnly(Outcome.PERMANENT);
    assertThat(broker.topicQuestions).hasValue(1);
  }

  private List<Verdict> publishToATopicTheProducerCannotFind() throws Exception {
    publishOnce();
    ScriptedProducer producer = clients.last();
    producer.failInSend.put(
        "gone",
        new TimeoutException(
            "Topic gone not present in metadata after 300 ms.",
            new UnknownTopicOrPartitionException("This server does not host this topic")));
    CompletableFuture<List<Verdict>> stage =
        publish(routed("gone", "a", "1"), routed("t", "b", "2"), routed("gone", "c", "3"));
    producer.completeNext();
    return verdicts(stage);
  }

  /**
   * Issue #29 point 7: a record the producer gave up after queueing it (here the broker refused its
   * timestamp) closes the producer inside its callback, on the I/O thread, so that the producer
   * renumbers and sends none of the partition's later records; those fail as not acknowledged.
   */
  @Test
  void aRecordGivenUpAfterItWasQueuedClosesTheProducerInsideItsCallback() throws Exception {
    CompletableFuture<List<Verdict>> stage =
        publish(routed("t", "a", "1"), routed("t", "a", "2"), routed("t", "b", "3"));
    ScriptedProducer producer = clients.last();

    assertThat(producer.errorNext(new InvalidTimestampException("Timestamp is out of range")))
        .isTrue();
    assertThat(producer.closed()).as("closed before the callback returned").isTrue();
    assertThat(producer.closeTimeout).isEqualTo(Duration.ZERO);
    producer.errorNext(new KafkaException("Producer is closed forcefully."));
    producer.errorNext(new KafkaException("Producer is closed forcefully."));

    List<Verdict> verdicts = verdicts(stage);
    assertThat(outcomes(verdicts))
        .containsExactly(Outcome.RETRYABLE, Outcome.RETRYABLE, Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(1).error()).startsWith("not sent: an earlier event");
    assertThat(verdicts.get(2).error())
        .contains("closed after it gave up an earlier record")
        .contains("InvalidTimestampException");
    CompletableFuture<List<Verdict>> next = publish(routed("t", "b", "3"));
    assertThat(clients.producers).hasSize(2);
    clients.last().completeNext();
    assertThat(outcomes(verdicts(next))).containsExactly(Outcome.PUBLISHED);
  }

  @Test
  void aFatalProducerErrorReplacesTheProducerForTheNextBatch() throws Exception {
    CompletableFuture<List<Verdict>> stage = publish(routed("t", "a", "1"));
    ScriptedProducer first = clients.last();
    first.errorNext(new OutOfOrderSequenceException("out of order"));
    assertThat(outcomes(verdicts(stage))).containsExactly(Outcome.SINK_UNAVAILABLE);
    await().atMost(Duration.ofSeconds(5)).until(first::closed);

    CompletableFuture<List<Verdict>> next = publish(routed("t", "a", "1"));
    assertThat(clients.producers).hasSize(2);
    clients.last().completeNext();
    assertThat(outcomes(verdicts(next))).containsExactly(Outcome.PUBLISHED);
  }

  @Test
  void aProducerClosedUnderneathIsReplaced() throws Exception {
    publishOnce();
    clients.last().close();
    List<Verdict> verdicts = verdicts(publish(routed("t", "a", "1"), routed("t", "b", "2")));
    assertThat(outcomes(verdicts)).containsOnly(Outcome.SINK_UNAVAILABLE);
    CompletableFuture<List<Verdict>> next = publish(routed("t", "a", "1"));
    assertThat(clients.producers).hasSize(2);
    clients.last().completeNext();
    assertThat(outcomes(verdicts(next))).containsExactly(Outcome.PUBLISHED);
  }

  @Test
  void aProducerThatCannotBeBuiltMakesTheBatchUnavailable() throws Exception {
    clients.failCreate = new KafkaException("Failed to construct kafka producer");
    List<Verdict> verdicts = verdicts(publish(routed("t", "a", "1"), routed("t", "b", "2")));
    assertThat(outcomes(verdicts)).containsOnly(Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(0).error()).contains("Failed to construct kafka producer");
    assertThat(sink.probe(Duration.ofMillis(100))).isFalse();
  }

  @Test
  void closeReleasesBatchesStillWaitingAndLaterBatchesAreUnavailable() throws Exception {
    CompletableFuture<List<Verdict>> stage = publish(routed("t", "a", "1"));
    sink.close(Duration.ofMillis(100));
    assertThat(outcomes(verdicts(stage))).containsExactly(Outcome.SINK_UNAVAILABLE);
    assertThat(clients.last().closed()).isTrue();
    List<Verdict> after = verdicts(publish(routed("t", "a", "1")));
    assertThat(outcomes(after)).containsExactly(Outcome.SINK_UNAVAILABLE);
    assertThat(after.get(0).error()).contains("closed");
  }

  @Test
  void closeWaitsTheWholeTimeoutOnlyForBatchesStillWaiting() throws Exception {
    CompletableFuture<List<Verdict>> answered = publish(routed("t", "a", "1"));
    assertThat(clients.last().completeNext()).isTrue();
    assertThat(outcomes(verdicts(answered))).containsExactly(Outcome.PUBLISHED);
    // Nothing the relay waits for is left in the producer: a short close, not the whole timeout.
    sink.close(Duration.ofSeconds(30));
    assertThat(clients.last().closeTimeout).isEqualTo(KafkaSink.IDLE_CLOSE);

    clients = new FakeClients(false);
    sink = sink("");
    CompletableFuture<List<Verdict>> waiting = publish(routed("t", "a", "1"));
    sink.close(Duration.ofSeconds(30));
    assertThat(clients.last().closeTimeout).isEqualTo(Duration.ofSeconds(30));
    assertThat(outcomes(verdicts(waiting))).containsExactly(Outcome.SINK_UNAVAILABLE);
  }

  @Test
  void anEmptyBatchCompletesAtOnce() throws Exception {
    assertThat(verdicts(sink.publish(List.of()).toCompletableFuture())).isEmpty();
    assertThat(clients.producers).isEmpty();
  }

  @Test
  void concurrentLanesEachGetTheirOwnVerdicts() throws Exception {
    clients = new FakeClients(true);
    sink = sink("");
    List<CompletableFuture<List<Verdict>>> stages = new ArrayList<>();
    List<Thread> lanes = new ArrayList<>();
    for (int lane = 0; lane < 4; lane++) {
      CompletableFuture<List<Verdict>> laneResult = new CompletableFuture<>();
      stages.add(laneResult);
      int l = lane;
      Thread t =
          new Thread(
              () -> {
                List<RoutedEvent> batch = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                  batch.add(routed("t", "k" + l, l + ":" + i));
                }
                sink.publish(batch).whenComplete((v, e) -> laneResult.complete(v));
              });
      lanes.add(t);
      t.start();
    }
    for (CompletableFuture<List<Verdict>> stage : stages) {
      assertThat(outcomes(verdicts(stage))).hasSize(200).containsOnly(Outcome.PUBLISHED);
    }
    for (Thread t : lanes) {
      t.join();
    }
    assertThat(clients.producers).hasSize(1);
    for (int lane = 0; lane < 4; lane++) {
      String prefix = lane + ":";
      assertThat(clients.last().history())
          .extracting(r -> new String(r.value()))
          .filteredOn(v -> v.startsWith(prefix))
          .extracting(v -> Integer.parseInt(v.substring(prefix.length())))
          .isSorted()
          .hasSize(200);
    }
  }

  /** Creates the sink's producer with one acknowledged batch. */
  private void publishOnce() throws Exception {
    CompletableFuture<List<Verdict>> stage = publish(routed("t", "z", "0"));
    clients.last().completeNext();
    verdicts(stage);
  }
}
