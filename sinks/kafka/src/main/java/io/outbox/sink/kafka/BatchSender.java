package io.outbox.sink.kafka;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import io.outbox.sink.kafka.FailureClassifier.Failure;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TransactionAbortedException;

/**
 * Sends one transaction's events for a {@link TransactionalLane} and tells which event is at fault
 * when the broker refused one: the lane's transaction is all or nothing, so an event that failed
 * only because another one did is not charged.
 */
final class BatchSender {

  private final Duration sendTimeout;
  private final TopicCheck topics;
  private final Set<String> writtenTopics; // the lane's: every topic it sent to since the start
  private final Ticker ticker;
  private final KafkaRecords records;

  /**
   * @param writtenTopics where each topic sent to is added, the lane's record of where a
   *     transaction of it may hang
   */
  BatchSender(
      Duration sendTimeout,
      TopicCheck topics,
      Set<String> writtenTopics,
      KafkaRecords records,
      Ticker ticker) {
    this.records = records;
    this.sendTimeout = sendTimeout;
    this.ticker = ticker;
    this.topics = topics;
    this.writtenTopics = writtenTopics;
  }

  /**
   * Sends every event unless one fails on the way; returns a failure of the whole sink, otherwise
   * leaves in {@code verdicts} the failure of each event at fault (nothing when all were acked).
   * Per partition, puts the last acknowledged offset into {@code written}; tells {@code batch}
   * where each event was acknowledged.
   *
   * @throws KafkaException when the producer was fenced
   */
  Failure sendAll(
      Producer<String, byte[]> p,
      List<RoutedEvent> events,
      Verdict[] verdicts,
      Map<TopicPartition, Long> written,
      BatchFate batch)
      throws InterruptedException {
    Deadline deadline = ticker.deadline(sendTimeout);
    List<Future<RecordMetadata>> sent = new ArrayList<>(events.size());
    int refusedInSend = -1; // the record the producer refused inside send, if any
    for (int i = 0; i < events.size(); i++) {
      RoutedEvent routed = events.get(i);
      String invalid = TopicNames.problem(routed.destination());
      if (invalid != null) {
        verdicts[i] = Verdict.permanent(invalid);
        break; // the rest is rolled back anyway: no use sending it
      }
      ProducerRecord<String, byte[]> record = records.toRecord(routed);
      writtenTopics.add(record.topic()); // a transaction of the lane may hang there from now on
      try {
        Future<RecordMetadata> f = p.send(record);
        sent.add(f);
        if (failedAlready(f)) {
          refusedInSend = i; // the size check...: the rest is rolled back anyway
          break;
        }
      } catch (KafkaException e) {
        if (FailureClassifier.isFence(e)) {
          throw e;
        }
        Failure f = classify(e, record, deadline);
        if (f.scope() == FailureClassifier.Scope.SINK) {
          return f;
        }
        verdicts[i] = f.verdict();
        break;
      }
    }
    p.flush();
    // Once the transaction is in error, the producer fails the records it still held with the
    // same exception as the one at fault: an exception shared by several records names none of
    // them (the pipeline splits the batch until the offender is alone).
    Throwable[] errors = new Throwable[sent.size()];
    Map<Throwable, Integer> shared = new IdentityHashMap<>();
    for (int i = 0; i < sent.size(); i++) {
      try {
        RecordMetadata m = sent.get(i).get(Math.max(1, deadline.nanosLeft()), TimeUnit.NANOSECONDS);
        TopicPartition tp = new TopicPartition(m.topic(), m.partition());
        written.merge(tp, m.offset(), Math::max);
        batch.acknowledged(i, tp);
      } catch (ExecutionException e) {
        errors[i] = e.getCause();
        shared.merge(errors[i], 1, Integer::sum);
      } catch (TimeoutException e) {
        return new Failure(
            Verdict.unavailable(
                "not acknowledged by Kafka within send-timeout ("
                    + sendTimeout.toMillis()
                    + " ms)"),
            FailureClassifier.Scope.SINK,
            false);
      }
    }
    for (int i = 0; i < errors.length; i++) {
      Throwable cause = errors[i];
      if (cause == null
          || cause instanceof TransactionAbortedException
          || cause.getClass() == KafkaException.class) {
        continue; // failed because another record of the transaction did
      }
      if (FailureClassifier.isFence(cause)) {
        throw (KafkaException) cause;
      }
      Failure f = classify(cause, records.toRecord(events.get(i)), deadline);
      if (f.scope() == FailureClassifier.Scope.SINK) {
        return f; // an outage, whoever it reached first
      }
      if ((refusedInSend >= 0 && i != refusedInSend)
          || (refusedInSend < 0 && shared.get(cause) > 1)) {
        continue; // failed because another record of the transaction did
      }
      verdicts[i] = f.verdict();
    }
    return null;
  }

  private boolean failedAlready(Future<RecordMetadata> f) {
    if (!f.isDone()) {
      return false;
    }
    try {
      f.get();
      return false;
    } catch (ExecutionException e) {
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private Failure classify(Throwable e, ProducerRecord<String, byte[]> record, Deadline deadline) {
    Failure f = FailureClassifier.classify(e, record.topic(), KafkaRecords.size(record));
    if (f.checkTopic()) {
      f = FailureClassifier.confirmed(e, record.topic(), topics.await(record.topic(), deadline));
    }
    return f;
  }

  /**
   * Sends the batch's ledger record to the lane's ledger partition and waits for its
   * acknowledgement: it must be acknowledged, in the transaction, before the commit is asked for (a
   * transaction committed without it would be sent again after a crash; seen once: a committed
   * transaction of a killed relay whose events were readable and whose ledger record was not, in a
   * broker's log).
   *
   * @throws KafkaException when it was refused (the producer's exception, a fence among them) or
   *     not acknowledged within send-timeout (a {@link
   *     org.apache.kafka.common.errors.TimeoutException})
   * @throws InterruptedException when interrupted while waiting
   */
  RecordMetadata sendLedgerRecord(
      Producer<String, byte[]> p, String ledgerTopic, int lane, LedgerRecord ledger)
      throws InterruptedException {
    Future<RecordMetadata> write =
        p.send(new ProducerRecord<>(ledgerTopic, lane, "lane-" + lane, LedgerCodec.encode(ledger)));
    p.flush();
    try {
      return write.get(sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof KafkaException k ? k : new KafkaException(e.getCause());
    } catch (TimeoutException e) {
      throw new org.apache.kafka.common.errors.TimeoutException(
          "the ledger record was not acknowledged within send-timeout");
    }
  }
}
