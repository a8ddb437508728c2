package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.sink.kafka.FailureClassifier.Failure;
import io.outbox.sink.kafka.FailureClassifier.Scope;
import io.outbox.sink.kafka.TopicCheck.Answer;
import io.outbox.sink.kafka.TopicCheck.Kind;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownServerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FailureClassifierTest {

  static java.util.stream.Stream<Arguments> table() {
    return java.util.stream.Stream.of(
        // permanent for the event
        Arguments.of(new RecordTooLargeException("too big"), Outcome.PERMANENT, Scope.EVENT, false),
        Arguments.of(
            new RecordBatchTooLargeException("big"), Outcome.PERMANENT, Scope.EVENT, false),
        Arguments.of(new SerializationException("bad"), Outcome.PERMANENT, Scope.EVENT, false),
        // permanent for the topic
        Arguments.of(new InvalidTopicException("bad"), Outcome.PERMANENT, Scope.TOPIC, false),
        Arguments.of(
            new TopicAuthorizationException("denied"), Outcome.PERMANENT, Scope.TOPIC, false),
        // retryable for the event
        Arguments.of(new NotEnoughReplicasException("isr"), Outcome.RETRYABLE, Scope.EVENT, false),
        Arguments.of(
            new NotEnoughReplicasAfterAppendException("isr"),
            Outcome.RETRYABLE,
            Scope.EVENT,
            false),
        Arguments.of(new CorruptRecordException("crc"), Outcome.RETRYABLE, Scope.EVENT, false),
        Arguments.of(new UnknownServerException("?"), Outcome.RETRYABLE, Scope.EVENT, false),
        Arguments.of(new NullPointerException(), Outcome.RETRYABLE, Scope.EVENT, false),
        // the sink is unavailable
        Arguments.of(
            new TimeoutException("Topic t not present in metadata after 5000 ms."),
            Outcome.SINK_UNAVAILABLE,
            Scope.SINK,
            false),
        Arguments.of(
            new TimeoutException("Expiring 3 record(s) for t-0: 30001 ms has passed"),
            Outcome.SINK_UNAVAILABLE,
            Scope.SINK,
            false),
        Arguments.of(new NetworkException("down"), Outcome.SINK_UNAVAILABLE, Scope.SINK, false),
        Arguments.of(new DisconnectException("down"), Outcome.SINK_UNAVAILABLE, Scope.SINK, false),
        Arguments.of(
            new SaslAuthenticationException("bad password"),
            Outcome.SINK_UNAVAILABLE,
            Scope.SINK,
            false),
        // the producer is broken and must be replaced
        Arguments.of(
            new ClusterAuthorizationException("no idempotent write"),
            Outcome.SINK_UNAVAILABLE,
            Scope.SINK,
            true),
        Arguments.of(new ProducerFencedException("f"), Outcome.SINK_UNAVAILABLE, Scope.SINK, true),
        Arguments.of(
            new OutOfOrderSequenceException("seq"), Outcome.SINK_UNAVAILABLE, Scope.SINK, true),
        Arguments.of(
            new IllegalStateException("Cannot perform operation after producer has been closed"),
            Outcome.SINK_UNAVAILABLE,
            Scope.SINK,
            true),
        Arguments.of(
            new KafkaException("Producer closed while send in progress"),
            Outcome.SINK_UNAVAILABLE,
            Scope.SINK,
            true));
  }

  @ParameterizedTest
  @MethodSource("table")
  void classifiesLikeDesignSection3(
      Throwable error, Outcome outcome, Scope scope, boolean producerBroken) {
    Failure f = FailureClassifier.classify(error, "outbox.order", 100);
    assertThat(f.verdict().outcome()).isEqualTo(outcome);
    assertThat(f.scope()).isEqualTo(scope);
    assertThat(f.producerBroken()).isEqualTo(producerBroken);
    assertThat(f.verdict().error()).startsWith("topic 'outbox.order': ").doesNotContain("\n");
  }

  @Test
  void tooLargeNamesTheRecordSizeAndKafkasLimit() {
    Failure f =
        FailureClassifier.classify(
            new RecordTooLargeException(
                "The message is 2097252 bytes when serialized which is larger than 1048576,"
                    + " which is the value of the max.request.size configuration."),
            "outbox.order",
            2097230);
    assertThat(f.verdict().error())
        .contains("record of 2097230 bytes")
        .contains("larger than 1048576");
  }

  @Test
  void unwrapsExecutionExceptions() {
    Failure f =
        FailureClassifier.classify(
            new ExecutionException(new RecordTooLargeException("x")), "t", 1);
    assertThat(f.verdict().outcome()).isEqualTo(Outcome.PERMANENT);
  }

  static java.util.stream.Stream<Throwable> topicNotFound() {
    return java.util.stream.Stream.of(
        new UnknownTopicOrPartitionException("This server does not host this topic-partition."),
        new TimeoutException(
            "Topic t not present in metadata after 5000 ms.",
            new UnknownTopicOrPartitionException("This server does not host this topic")),
        new TimeoutException("Topic t not present in metadata after 5000 ms."),
        new TimeoutException(
            "Partition 7 of topic t with partition count 3 is not present in metadata after 5000"
                + " ms."));
  }

  @ParameterizedTest
  @MethodSource("topicNotFound")
  void aTopicTheProducerCannotFindIsNeverPermanentBeforeTheBrokerConfirmsIt(Throwable error) {
    Failure provisional = FailureClassifier.classify(error, "t", 1);
    assertThat(provisional.checkTopic()).isTrue();
    assertThat(provisional.verdict().outcome()).isEqualTo(Outcome.SINK_UNAVAILABLE);
  }

  @Test
  void anExpiredBatchIsNoTopicQuestion() {
    Failure f =
        FailureClassifier.classify(
            new TimeoutException("Expiring 3 record(s) for t-0: 30001 ms has passed"), "t", 1);
    assertThat(f.checkTopic()).isFalse();
  }

  static java.util.stream.Stream<Arguments> answers() {
    return java.util.stream.Stream.of(
        Arguments.of(
            Kind.ABSENT, Outcome.PERMANENT, Scope.TOPIC, "auto.create.topics.enable=false"),
        Arguments.of(Kind.EXISTS, Outcome.SINK_UNAVAILABLE, Scope.TOPIC, "the topic exists"),
        Arguments.of(
            Kind.AUTO_CREATED,
            Outcome.SINK_UNAVAILABLE,
            Scope.TOPIC,
            "auto.create.topics.enable=true"),
        Arguments.of(
            Kind.AMBIGUOUS, Outcome.SINK_UNAVAILABLE, Scope.TOPIC, "(denied: no DescribeConfigs)"),
        Arguments.of(
            Kind.NO_ANSWER, Outcome.SINK_UNAVAILABLE, Scope.SINK, "(denied: no DescribeConfigs)"));
  }

  @ParameterizedTest
  @MethodSource("answers")
  void onlyATopicTheBrokerSaysIsMissingAndNotCreatedIsPermanent(
      Kind kind, Outcome outcome, Scope scope, String says) {
    Failure f =
        FailureClassifier.confirmed(
            new TimeoutException(
                "Topic t not present in metadata after 5000 ms.",
                new UnknownTopicOrPartitionException("This server does not host this topic")),
            "t",
            new Answer(kind, "denied: no DescribeConfigs"));
    assertThat(f.verdict().outcome()).isEqualTo(outcome);
    assertThat(f.scope()).isEqualTo(scope);
    assertThat(f.producerBroken()).isFalse();
    assertThat(f.checkTopic()).isFalse();
    assertThat(f.verdict().error())
        .startsWith("topic 't': ")
        .contains(says)
        .contains("not present in metadata after 5000 ms");
  }
}
