package io.outbox.sink.kafka;

import io.outbox.relay.spi.Verdict;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.BrokerNotAvailableException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.UnsupportedVersionException;

/**
 * Turns a producer failure into a verdict (docs/design.md, "Failure classes"): what the event can
 * never pass is permanent, what the event may pass later is retryable, and what says the cluster or
 * the client is not working is sink-unavailable. Also tells how far a failure reaches, so that the
 * rest of a batch is not sent into the same wall.
 */
final class FailureClassifier {

  /** How far a failure reaches within the batch being sent. */
  enum Scope {
    /** This event only (too large, a broker error for its partition). */
    EVENT,
    /** Every event for the same topic (invalid, missing, not authorized). */
    TOPIC,
    /** Every event (cluster unreachable, producer broken or closed). */
    SINK
  }

  /**
   * A classified failure.
   *
   * @param verdict the event's verdict, with a one-line error naming the topic
   * @param scope how far the failure reaches
   * @param producerBroken whether the producer must be replaced before the next batch
   * @param checkTopic whether the producer could not find the topic: the verdict is provisional
   *     until the broker said whether the topic exists ({@link #confirmed})
   */
  record Failure(Verdict verdict, Scope scope, boolean producerBroken, boolean checkTopic) {
    Failure(Verdict verdict, Scope scope, boolean producerBroken) {
      this(verdict, scope, producerBroken, false);
    }
  }

  private FailureClassifier() {}

  /**
   * @param error what the producer threw or passed to the callback
   * @param topic the record's topic
   * @param recordBytes the record's key, value and header bytes, for size errors
   */
  static Failure classify(Throwable error, String topic, int recordBytes) {
    Throwable e = unwrap(error);
    String where = "topic '" + topic + "': ";
    String what = describe(e);
    if (e instanceof RecordTooLargeException || e instanceof RecordBatchTooLargeException) {
      // The client's own check names its limit; the broker's refusal does not, so say where it is.
      String limit =
          String.valueOf(e.getMessage()).contains("max.request.size")
                  || String.valueOf(e.getMessage()).contains("buffer.memory")
              ? ""
              : " (the broker's limit: the topic's max.message.bytes, by default message.max.bytes)";
      return permanent(
          Scope.EVENT,
          where
              + "record of "
              + recordBytes
              + " bytes (key, value and headers) is too large for Kafka: "
              + what
              + limit);
    }
    if (e instanceof InvalidTopicException) {
      return permanent(Scope.TOPIC, where + "invalid topic: " + what);
    }
    if (e instanceof TopicAuthorizationException) {
      return permanent(Scope.TOPIC, where + "not authorized to write to the topic: " + what);
    }
    if (e instanceof ClusterAuthorizationException) {
      // Idempotent writes need cluster-level permission: no event can pass, the client is stuck.
      return new Failure(
          Verdict.unavailable(where + "not authorized on the cluster: " + what), Scope.SINK, true);
    }
    if (e instanceof AuthorizationException) {
      return permanent(Scope.TOPIC, where + "not authorized: " + what);
    }
    if (e instanceof AuthenticationException) {
      return unavailable(where + "authentication with Kafka failed: " + what, false);
    }
    if (e instanceof SerializationException) {
      return permanent(Scope.EVENT, where + "record cannot be serialized: " + what);
    }
    if (e instanceof TimeoutException) {
      return timeout((TimeoutException) e, topic, recordBytes, where, what);
    }
    if (e instanceof UnknownTopicOrPartitionException) {
      // Also what a broker says while its metadata lags (a restart, a moved partition): not proof.
      return new Failure(
          Verdict.unavailable(where + "the broker does not know the topic or partition: " + what),
          Scope.TOPIC,
          false,
          true);
    }
    if (e instanceof NotEnoughReplicasException
        || e instanceof NotEnoughReplicasAfterAppendException) {
      return new Failure(Verdict.retryable(where + what), Scope.EVENT, false);
    }
    if (e instanceof NetworkException
        || e instanceof DisconnectException
        || e instanceof BrokerNotAvailableException) {
      return unavailable(where + "connection to Kafka lost: " + what, false);
    }
    if (e instanceof ProducerFencedException
        || e instanceof InvalidProducerEpochException
        || e instanceof OutOfOrderSequenceException
        || e instanceof UnsupportedVersionException) {
      return unavailable(where + "the producer failed and is replaced: " + what, true);
    }
    if (e instanceof InterruptException) {
      return unavailable(where + "interrupted while sending", false);
    }
    if (e instanceof RetriableException) {
      return new Failure(Verdict.retryable(where + what), Scope.EVENT, false);
    }
    if (e instanceof IllegalStateException) {
      // send() after the producer was closed (the sink closing, or a broken producer replaced).
      return unavailable(where + "the producer is closed: " + what, true);
    }
    if (e instanceof KafkaException
        && !(e instanceof org.apache.kafka.common.errors.ApiException)) {
      // Client-side failures outside the API errors: a producer in a fatal state, closed while
      // sending, or that could not be built.
      return unavailable(where + "the producer failed: " + what, true);
    }
    // Other broker errors for this record, or an unexpected exception: counted as an attempt, so
    // that a repeating one ends as a dead letter after max-attempts.
    return new Failure(Verdict.retryable(where + what), Scope.EVENT, false);
  }

  private static Failure timeout(
      TimeoutException e, String topic, int recordBytes, String where, String what) {
    Throwable cause = e.getCause();
    if (cause instanceof InvalidTopicException || cause instanceof AuthorizationException) {
      return classify(cause, topic, recordBytes);
    }
    String unavailable = where + "no answer from Kafka in time: " + what;
    if (cause instanceof UnknownTopicOrPartitionException
        || String.valueOf(e.getMessage()).contains("not present in metadata")) {
      // The producer found no metadata for the topic within max.block.ms: the topic may be
      // missing, or the metadata late. Provisional until the broker said which.
      return new Failure(Verdict.unavailable(unavailable), Scope.SINK, false, true);
    }
    // Buffer memory not freed, or the record expired unacknowledged after delivery.timeout.ms:
    // Kafka is not answering.
    return unavailable(unavailable, false);
  }

  /**
   * The final failure of a provisional one ({@link Failure#checkTopic()}) once the broker answered
   * about the topic: permanent only when the topic is known not to exist and the broker does not
   * create topics; otherwise the sink is unavailable (no attempt is counted), for the topic when
   * the broker answered, for the whole sink when it did not.
   */
  static Failure confirmed(Throwable error, String topic, TopicCheck.Answer answer) {
    String where = "topic '" + topic + "': ";
    String what = describe(unwrap(error));
    String detail = answer.detail().isEmpty() ? "" : " (" + answer.detail() + ")";
    return switch (answer.kind()) {
      case ABSENT ->
          permanent(
              Scope.TOPIC,
              where
                  + "the topic does not exist and the broker does not auto-create topics"
                  + " (auto.create.topics.enable=false): "
                  + what);
      case EXISTS ->
          topicUnavailable(
              where
                  + "the topic exists but the producer got no usable metadata for it in time"
                  + " (a partition without a leader?): "
                  + what);
      case AUTO_CREATED ->
          topicUnavailable(
              where
                  + "the topic does not exist yet and the broker creates it on first use"
                  + " (auto.create.topics.enable=true): "
                  + what);
      case AMBIGUOUS ->
          topicUnavailable(
              where
                  + "the topic was not found, and the broker did not tell whether it exists and"
                  + " may be created"
                  + detail
                  + ": "
                  + what);
      case NO_ANSWER ->
          unavailable(
              where
                  + "no answer from Kafka in time, nor to whether the topic exists"
                  + detail
                  + ": "
                  + what,
              false);
    };
  }

  private static Failure topicUnavailable(String error) {
    return new Failure(Verdict.unavailable(error), Scope.TOPIC, false);
  }

  private static Failure permanent(Scope scope, String error) {
    return new Failure(Verdict.permanent(error), scope, false);
  }

  private static Failure unavailable(String error, boolean producerBroken) {
    return new Failure(Verdict.unavailable(error), Scope.SINK, producerBroken);
  }

  private static Throwable unwrap(Throwable e) {
    Throwable t = e;
    while ((t instanceof ExecutionException || t instanceof CompletionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** Class and message, plus the cause's when the message alone hides it; never payload data. */
  static String describe(Throwable e) {
    String message = e.getMessage() == null ? "" : ": " + e.getMessage();
    Throwable cause = e.getCause();
    String because =
        cause != null && cause != e && cause.getMessage() != null
            ? " (caused by " + cause.getClass().getSimpleName() + ": " + cause.getMessage() + ")"
            : "";
    return e.getClass().getSimpleName() + message + because;
  }

  /** Whether {@code e} says another producer of the transactional id registered since (fenced). */
  static boolean isFence(Throwable e) {
    return e instanceof org.apache.kafka.common.errors.ProducerFencedException
        || e instanceof org.apache.kafka.common.errors.InvalidProducerEpochException
        || e instanceof org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
  }
}
