package io.outbox.sink.kafka;

import io.outbox.relay.spi.Deadline;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.RetriableException;

/**
 * Asks the broker whether a topic the producer could not find really is missing, and whether the
 * broker would create it ({@code auto.create.topics.enable}), before its events are called
 * permanent failures: a metadata hiccup must not dead-letter healthy events. Answers are cached per
 * topic for {@link #TOPIC_TTL}, so that a batch for one missing topic costs one question, and the
 * broker's auto-creation setting for {@link #AUTO_CREATE_TTL}.
 */
final class TopicCheck {

  /** How long the answer for one topic is reused. */
  static final Duration TOPIC_TTL = Duration.ofSeconds(10);

  /** How long the broker's {@code auto.create.topics.enable} is reused once known. */
  static final Duration AUTO_CREATE_TTL = Duration.ofMinutes(5);

  private static final int SWEEP_ABOVE = 256;

  /** What the broker said about a topic. */
  enum Kind {
    /** The topic does not exist and the broker does not create topics on first use. */
    ABSENT,
    /** The topic exists. */
    EXISTS,
    /** The topic does not exist, and the broker creates topics on first use. */
    AUTO_CREATED,
    /** The broker answered, but not enough to tell (a request refused, a setting not shown). */
    AMBIGUOUS,
    /** The broker did not answer in time. */
    NO_ANSWER
  }

  /**
   * @param kind what the broker said
   * @param detail for messages: the failure that made the answer ambiguous or missing, else empty
   */
  record Answer(Kind kind, String detail) {}

  /** The two questions, asked of the broker; an admin client in production, scripted in tests. */
  interface Broker {
    /**
     * Completes with whether {@code topic} exists, or exceptionally with the broker's (or the
     * client's) failure; never creates the topic.
     */
    CompletableFuture<Boolean> topicExists(String topic, Duration timeout);

    /** Completes with the broker's {@code auto.create.topics.enable}, or exceptionally. */
    CompletableFuture<Boolean> autoCreatesTopics(Duration timeout);
  }

  private record Cached<T>(CompletableFuture<T> value, long expiresAtMillis) {}

  private final Broker broker;
  private final Duration timeout;
  private final Clock clock;
  private final Map<String, Cached<Answer>> topics = new ConcurrentHashMap<>();
  private volatile Cached<Answer> autoCreate; // the answer's kind: AUTO_CREATED or ABSENT

  /**
   * @param broker asks the broker
   * @param timeout the bound on one check (both questions together)
   * @param clock for the cache's expiry
   */
  TopicCheck(Broker broker, Duration timeout, Clock clock) {
    this.broker = broker;
    this.timeout = timeout;
    this.clock = clock;
  }

  /** The broker's answer about {@code topic}; the future never completes exceptionally. */
  CompletableFuture<Answer> answer(String topic) {
    long now = clock.millis();
    if (topics.size() > SWEEP_ABOVE) {
      topics.values().removeIf(c -> c.expiresAtMillis() <= now);
    }
    return topics
        .compute(
            topic,
            (t, cached) ->
                cached != null && cached.expiresAtMillis() > now
                    ? cached
                    : new Cached<>(ask(t, now), now + TOPIC_TTL.toMillis()))
        .value();
  }

  /**
   * {@link #answer} waited for until {@code deadline}, the batch's send-timeout; NO_ANSWER when it
   * passed first.
   */
  Answer await(String topic, Deadline deadline) {
    long left = deadline.nanosLeft();
    if (left <= 0) {
      return new Answer(Kind.NO_ANSWER, "send-timeout expired before the topic check");
    }
    try {
      return answer(topic).get(left, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Answer(Kind.NO_ANSWER, "interrupted");
    } catch (TimeoutException | ExecutionException e) {
      return new Answer(Kind.NO_ANSWER, "send-timeout expired during the topic check");
    }
  }

  private CompletableFuture<Answer> ask(String topic, long startMillis) {
    return call(() -> broker.topicExists(topic, timeout))
        .handle(
            (exists, e) -> {
              if (e != null) {
                return CompletableFuture.completedFuture(failed(e));
              }
              if (exists) {
                return CompletableFuture.completedFuture(new Answer(Kind.EXISTS, ""));
              }
              return autoCreate(startMillis);
            })
        .thenCompose(f -> f);
  }

  /** ABSENT or AUTO_CREATED when the broker's setting is known, else AMBIGUOUS. */
  private CompletableFuture<Answer> autoCreate(long startMillis) {
    long now = clock.millis();
    Cached<Answer> cached = autoCreate;
    if (cached != null && cached.expiresAtMillis() > now) {
      return cached.value();
    }
    Duration left = timeout.minusMillis(Math.max(0, now - startMillis));
    if (left.toMillis() < 1) {
      return CompletableFuture.completedFuture(
          new Answer(Kind.AMBIGUOUS, "auto.create.topics.enable not asked: no time left"));
    }
    CompletableFuture<Answer> answer =
        call(() -> broker.autoCreatesTopics(left))
            .handle(
                (creates, e) -> {
                  if (e != null) {
                    return new Answer(
                        Kind.AMBIGUOUS,
                        "auto.create.topics.enable unknown: "
                            + FailureClassifier.describe(unwrap(e)));
                  }
                  return new Answer(creates ? Kind.AUTO_CREATED : Kind.ABSENT, "");
                });
    answer.thenAccept(
        a -> {
          if (a.kind() != Kind.AMBIGUOUS) {
            autoCreate = new Cached<>(answer, clock.millis() + AUTO_CREATE_TTL.toMillis());
          }
        });
    return answer;
  }

  /** A refusal is an answer (ambiguous); a timeout or a lost connection is none. */
  private static Answer failed(Throwable error) {
    Throwable e = unwrap(error);
    String what = FailureClassifier.describe(e);
    if (e instanceof ApiException && !(e instanceof RetriableException)) {
      return new Answer(Kind.AMBIGUOUS, what);
    }
    return new Answer(Kind.NO_ANSWER, what);
  }

  private static <T> CompletableFuture<T> call(
      java.util.function.Supplier<CompletableFuture<T>> q) {
    try {
      return q.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e); // e.g. the admin client is closed
    }
  }

  private static Throwable unwrap(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
