package io.outbox.sink.kafka;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The broker's answers to {@link TopicCheck}, scripted: the topics that exist, the broker's
 * auto-creation setting, or a failure for either question; counts the questions.
 */
final class ScriptedBroker implements TopicCheck.Broker {
  final Set<String> existing = ConcurrentHashMap.newKeySet();
  final Map<String, RuntimeException> topicFailures = new ConcurrentHashMap<>();
  volatile boolean autoCreates;
  volatile boolean silent; // no answer ever
  volatile RuntimeException autoCreateFailure;
  final AtomicInteger topicQuestions = new AtomicInteger();
  final AtomicInteger autoCreateQuestions = new AtomicInteger();

  @Override
  public CompletableFuture<Boolean> topicExists(String topic, Duration timeout) {
    topicQuestions.incrementAndGet();
    if (silent) {
      return new CompletableFuture<>();
    }
    RuntimeException e = topicFailures.get(topic);
    return e != null
        ? CompletableFuture.failedFuture(e)
        : CompletableFuture.completedFuture(existing.contains(topic));
  }

  @Override
  public CompletableFuture<Boolean> autoCreatesTopics(Duration timeout) {
    autoCreateQuestions.incrementAndGet();
    RuntimeException e = autoCreateFailure;
    return e != null
        ? CompletableFuture.failedFuture(e)
        : CompletableFuture.completedFuture(autoCreates);
  }
}
