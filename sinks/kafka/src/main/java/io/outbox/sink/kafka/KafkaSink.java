package io.outbox.sink.kafka;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.support.PendingBatch;
import io.outbox.relay.spi.support.PipelineThreads;
import io.outbox.relay.spi.support.SinkHealthLog;
import io.outbox.sink.kafka.FailureClassifier.Failure;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.ApiException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes batches to Kafka through one idempotent producer shared by every lane. Each record's
 * callback yields its verdict; a batch completes when all verdicts are in, or when {@code
 * send-timeout} expires, whichever comes first. No thread waits per record.
 */
final class KafkaSink implements Sink {

  private static final Logger log = LoggerFactory.getLogger(KafkaSink.class);

  /**
   * How long {@link #close} lets the producer finish when no batch waits for an answer any more:
   * what is left in it then (records of batches given up after {@code send-timeout}) is settled by
   * no one and only becomes a duplicate if delivered, so a stop need not wait for it.
   */
  static final Duration IDLE_CLOSE = Duration.ofSeconds(2);

  private final String pipeline;
  private final KafkaSinkSettings settings;
  private final KafkaClients clients;
  private final TopicCheck topics;
  private final ScheduledThreadPoolExecutor executor;
  private final Set<PendingBatch> inFlight = ConcurrentHashMap.newKeySet();
  private final SinkHealthLog health;
  private final Ticker ticker;
  private final KafkaRecords records;

  KafkaSink(
      String pipeline,
      KafkaSinkSettings settings,
      KafkaClients clients,
      TopicCheck topics,
      int lanes,
      Ticker ticker) {
    this.pipeline = pipeline;
    this.ticker = ticker;
    this.health = new SinkHealthLog(log, "Kafka", pipeline);
    this.settings = settings;
    this.records = KafkaRecords.of(settings);
    this.clients = clients;
    this.topics = topics;
    this.executor =
        new ScheduledThreadPoolExecutor(
            Math.max(1, Math.min(lanes, 8)),
            PipelineThreads.daemons(pipeline, "outbox-relay-kafka-" + pipeline));
    executor.setRemoveOnCancelPolicy(true);
    executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  @Override
  public CompletionStage<List<Verdict>> publish(List<RoutedEvent> batch) {
    if (batch.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    PendingBatch pending =
        PendingBatch.withoutTurns(
            batch,
            ticker.deadline(settings.sendTimeout()),
            e -> "topic '" + e.destination() + "'",
            this::finish);
    Producer<String, byte[]> producer;
    try {
      producer = clients.producer();
    } catch (RuntimeException e) {
      pending.expire("cannot use the Kafka producer: " + FailureClassifier.describe(e));
      return pending.result();
    }
    inFlight.add(pending);
    try {
      pending.timer(
          executor.schedule(
              () ->
                  pending.expire(
                      "not acknowledged by Kafka within send-timeout ("
                          + settings.sendTimeout().toMillis()
                          + " ms)"),
              settings.sendTimeout().toMillis(),
              TimeUnit.MILLISECONDS));
    } catch (RejectedExecutionException e) {
      pending.expire("the Kafka sink is closed");
      return pending.result();
    }
    try {
      send(producer, pending);
    } catch (RuntimeException e) {
      // A defect, not an outage: count an attempt so that it ends as a dead letter, not a loop.
      log.warn("Kafka sink of pipeline {} failed unexpectedly while sending", pipeline, e);
      pending.failFrom(
          0,
          Verdict.retryable(
              "unexpected failure of the Kafka sink: " + FailureClassifier.describe(e)));
    }
    return pending.result();
  }

  /**
   * Hands every record to the producer, in batch order. A failure found while sending (the callback
   * runs inside {@code send}) keeps later records that would hit the same wall from being sent: the
   * whole sink, the same topic, or the same aggregate (whose order must hold: {@link PendingBatch}
   * holds a failed event's later events behind it, sent or not).
   */
  private void send(Producer<String, byte[]> producer, PendingBatch pending) {
    List<RoutedEvent> events = pending.events();
    Verdict sinkFailure = null;
    Map<String, Verdict> topicFailures = new HashMap<>();
    for (int i = 0; i < events.size(); i++) {
      RoutedEvent routed = events.get(i);
      String topic = routed.destination();
      if (sinkFailure == null && pending.expired()) {
        sinkFailure =
            Verdict.unavailable(
                "topic '"
                    + topic
                    + "': send-timeout ("
                    + settings.sendTimeout().toMillis()
                    + " ms) expired before the producer took the record");
      }
      if (pending.verdict(i) != null) {
        continue; // held behind an earlier event of its key that failed (PendingBatch)
      }
      Verdict skipped = skipped(sinkFailure, topicFailures.get(topic));
      if (skipped != null) {
        pending.complete(i, skipped);
        continue;
      }
      String invalidTopic = TopicNames.problem(topic);
      if (invalidTopic != null) {
        Verdict v = Verdict.permanent(invalidTopic);
        pending.complete(i, v);
        topicFailures.put(topic, v);
        continue;
      }
      Failure failure = sendOne(producer, pending, i, routed);
      if (failure != null) {
        switch (failure.scope()) {
          case SINK -> sinkFailure = failure.verdict();
          case TOPIC -> topicFailures.put(topic, failure.verdict());
          case EVENT -> {} // a retryable one held back its key's later events (PendingBatch)
        }
      }
    }
  }

  private static Verdict skipped(Verdict sinkFailure, Verdict topicFailure) {
    if (sinkFailure != null) {
      return Verdict.unavailable("not sent after an earlier failure: " + sinkFailure.error());
    }
    if (topicFailure != null) {
      return topicFailure;
    }
    return null;
  }

  /** Sends one record; returns the failure if it failed before {@code send} returned. */
  private Failure sendOne(
      Producer<String, byte[]> producer, PendingBatch pending, int index, RoutedEvent routed) {
    ProducerRecord<String, byte[]> record = records.toRecord(routed);
    RecordCallback callback = new RecordCallback(producer, pending, index, record);
    try {
      producer.send(record, callback);
      callback.sendReturned = true;
      // Failed inside send (metadata wait, size check): the callback ran on this thread.
      return callback.failedInSend;
    } catch (RuntimeException e) {
      // Thrown rather than reported: closed or fatally failed producer, interrupt, serializer.
      callback.sendReturned = true;
      return callback.fail(e, callback.classify(e), true);
    }
  }

  /** Turns the producer's answer for one record into its verdict. */
  private final class RecordCallback implements Callback {
    private final Producer<String, byte[]> producer;
    private final PendingBatch pending;
    private final int index;
    private final ProducerRecord<String, byte[]> record;
    private final Thread sender = Thread.currentThread();
    private volatile boolean sendReturned;
    private Failure failedInSend; // written and read by the sending thread only

    RecordCallback(
        Producer<String, byte[]> producer,
        PendingBatch pending,
        int index,
        ProducerRecord<String, byte[]> record) {
      this.producer = producer;
      this.pending = pending;
      this.index = index;
      this.record = record;
    }

    @Override
    public void onCompletion(RecordMetadata metadata, Exception exception) {
      if (exception == null) {
        pending.complete(index, Verdict.published());
        return;
      }
      boolean inSend = !sendReturned && Thread.currentThread() == sender;
      if (inSend) {
        // Refused before it was queued (size, metadata): no later record depends on it.
        failedInSend = fail(exception, classify(exception), true);
        return;
      }
      String topic = record.topic();
      String stoppedFor = clients.stoppedFor(producer);
      if (stoppedFor != null && !(exception instanceof ApiException)) {
        // Failed by the close below ("closed forcefully"), not by the broker: sent again.
        pending.complete(
            index,
            Verdict.unavailable(
                "topic '"
                    + topic
                    + "': not acknowledged when the producer was closed after it gave up an"
                    + " earlier record ("
                    + stoppedFor
                    + ")"));
        return;
      }
      Failure f = classify(exception);
      // Given up after it was queued: if its key must wait for it, the producer is stopped before
      // it sends anything more (KafkaClients.stop), so that no later record of the partition is
      // taken before this one. A topic still being checked is treated as unavailable meanwhile.
      pending.beforeFailure(
          f.verdict(),
          () ->
              clients.stop(
                  producer, "topic '" + topic + "': " + FailureClassifier.describe(exception)));
      fail(exception, f, false);
    }

    Failure classify(Exception exception) {
      return FailureClassifier.classify(exception, record.topic(), KafkaRecords.size(record));
    }

    /**
     * Records the failure {@code f} of {@code exception}. A topic the producer could not find is
     * first checked with the broker: on the sending thread by waiting (the scope decides what else
     * is sent), elsewhere (the producer's I/O thread, which must not block) when the answer
     * arrives.
     */
    Failure fail(Exception exception, Failure f, boolean onSendingThread) {
      if (f.checkTopic()) {
        String topic = record.topic();
        if (!onSendingThread) {
          topics
              .answer(topic)
              .thenAccept(a -> settle(FailureClassifier.confirmed(exception, topic, a)));
          return f;
        }
        f = FailureClassifier.confirmed(exception, topic, topics.await(topic, pending.deadline()));
      }
      settle(f);
      return f;
    }

    private void settle(Failure f) {
      pending.complete(index, f.verdict());
      if (f.producerBroken()) {
        clients.discard(producer, f.verdict().error());
      }
    }
  }

  /** Runs once per batch, on the thread of its last verdict (often the producer's I/O thread). */
  private void finish(PendingBatch batch) {
    inFlight.remove(batch);
    health.batch(batch.events(), batch.completeOn(executor));
  }

  @Override
  public boolean probe(Duration timeout) {
    return clients.probe(timeout, settings.probeTimeout(), health);
  }

  @Override
  public void close(Duration timeout) {
    Duration wait = inFlight.isEmpty() && IDLE_CLOSE.compareTo(timeout) < 0 ? IDLE_CLOSE : timeout;
    log.info(
        "Closing the Kafka sink of pipeline {} (timeout {} ms, {} batch(es) waiting)",
        pipeline,
        wait.toMillis(),
        inFlight.size());
    clients.close(wait);
    // The producer's close fails what it could not deliver; anything left is released here.
    for (PendingBatch batch : inFlight) {
      batch.expire("the Kafka sink was closed before Kafka acknowledged the record");
    }
    executor.shutdown();
  }
}
