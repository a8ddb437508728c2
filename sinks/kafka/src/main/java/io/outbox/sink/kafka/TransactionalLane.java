package io.outbox.sink.kafka;

import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.SinkTransaction;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.support.PipelineThreads;
import io.outbox.sink.kafka.FailureClassifier.Failure;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One lane's transactional producer ({@code transactional.id = <prefix>.lane-<n>}, the same on
 * every instance, so that a new one fences the old) and the thread that runs its transactions, one
 * after the other: begin, send the events, wait for their acknowledgements, send the ledger record,
 * commit; abort when an event failed.
 */
final class TransactionalLane {

  private static final Logger log = LoggerFactory.getLogger(TransactionalLane.class);
  private static final Duration HANGING_BOUND = Duration.ofSeconds(30);

  private final int lane;
  private final String pipeline;
  private final String transactionalId;
  private final Map<String, Object> config;
  private final KafkaClients.Factory factory;
  private final String ledgerTopic;
  private final TopicCheck topics;
  private final Duration sendTimeout;
  private final Duration checkBound; // for the questions to the coordinator: >= HANGING_BOUND
  private final HangingTransactions hanging;
  private final ExecutorService thread;
  private Producer<String, byte[]> producer; // lane thread only
  private boolean fenced; // lane thread only: set when fenced, cleared by fence()
  // Lane thread only: a producer was dropped, so a transaction of it may be left open; the next
  // registration looks for hanging transactions before the lane's first transaction.
  private boolean checkHanging = true;
  private final ProducerIdentity identity; // lane thread only
  private final HangingCheck hangingCheck; // lane thread only
  // The lane's last batch: its state between sent and settled (BatchFate owns the rules). Lane
  // thread only, but read by ledgerRead() through the thread.
  private volatile BatchFate fate;
  private final Set<String> writtenTopics = new HashSet<>(); // lane thread only: since the start
  private final BatchSender sender;

  TransactionalLane(
      int lane,
      String pipeline,
      String transactionalIdPrefix,
      Map<String, Object> producerConfig,
      KafkaClients.Factory factory,
      String ledgerTopic,
      TopicCheck topics,
      Duration sendTimeout,
      HangingTransactions hanging,
      KafkaRecords records,
      Ticker ticker) {
    this.lane = lane;
    this.pipeline = pipeline;
    this.transactionalId = transactionalIdPrefix + ".lane-" + lane;
    this.config = ProducerProperties.laneConfig(producerConfig, transactionalId, lane, sendTimeout);
    this.factory = factory;
    this.ledgerTopic = ledgerTopic;
    this.topics = topics;
    this.sendTimeout = sendTimeout;
    this.checkBound = sendTimeout.compareTo(HANGING_BOUND) > 0 ? sendTimeout : HANGING_BOUND;
    this.hanging = hanging;
    this.sender = new BatchSender(sendTimeout, topics, writtenTopics, records, ticker);
    this.identity = new ProducerIdentity(pipeline, lane, transactionalId);
    this.hangingCheck =
        new HangingCheck(
            pipeline,
            lane,
            transactionalId,
            ledgerTopic,
            hanging,
            identity,
            writtenTopics,
            sendTimeout);
    this.thread =
        Executors.newSingleThreadExecutor(
            PipelineThreads.laneDaemons(
                pipeline, lane, "outbox-relay-kafka-" + pipeline + "-lane-" + lane));
  }

  /**
   * Starts a fresh producer and registers it with the coordinator, which fences every earlier
   * producer of this transactional id and ends its open transaction; then aborts what the broker
   * left hanging.
   *
   * @param activation whether this instance just became active (another may have published with the
   *     lane's id since this one last did: hanging transactions are looked for on every partition
   *     of the cluster), or the lane registers again after its own transaction ended in doubt (only
   *     the partitions of the topics it wrote and its ledger partition are checked)
   */
  void fence(Duration timeout, boolean activation) {
    Future<?> done =
        thread.submit(
            () -> {
              if (activation) {
                hangingCheck.activation();
              }
              discard();
              register();
              log.info(
                  "pipeline {} lane {}: transactional producer '{}' registered (earlier holders"
                      + " fenced)",
                  pipeline,
                  lane,
                  transactionalId);
              abortHanging(timeout);
              fenced = false;
            });
    try {
      done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while registering " + transactionalId, e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw cause instanceof RuntimeException r
          ? r
          : new IllegalStateException(FailureClassifier.describe(cause), cause);
    } catch (TimeoutException e) {
      done.cancel(true);
      throw new IllegalStateException(
          "registering the transactional producer '"
              + transactionalId
              + "' took longer than "
              + timeout.toMillis()
              + " ms",
          e);
    }
  }

  /** Runs one transaction on the lane's thread. */
  CompletableFuture<SinkTransaction> publish(List<RoutedEvent> events, LedgerRecord ledger) {
    try {
      return CompletableFuture.supplyAsync(() -> transact(events, ledger), thread);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.completedFuture(
          new SinkTransaction.Failed("the Kafka sink is closed", false));
    }
  }

  private SinkTransaction transact(List<RoutedEvent> events, LedgerRecord ledger) {
    if (fenced) {
      return new SinkTransaction.Fenced(transactionalId + " was fenced by another instance");
    }
    if (producer == null) {
      // Dropped after a failure, with a transaction of it perhaps still open: a new one is
      // registered only through fence(), once the database confirmed the lease and before the
      // ledger is read (issue #30 point 2); registered here, it would fence the active instance's
      // producer if this one lost the role meanwhile.
      return new SinkTransaction.Failed(
          "the lane's transactional producer was dropped after a failure, with a transaction"
              + " perhaps still open; it registers again once the database confirmed the lease",
          true);
    }
    if (checkHanging) {
      try {
        abortHanging(checkBound);
      } catch (RuntimeException e) {
        log.warn("pipeline {} lane {}: {}", pipeline, lane, e.getMessage());
        return new SinkTransaction.Failed(
            "the lane's earlier transactions cannot be checked: " + e.getMessage(), false);
      }
    }
    try {
      identity.beforeTransaction(hanging, checkBound);
    } catch (RuntimeException e) {
      log.warn("pipeline {} lane {}: {}", pipeline, lane, e.getMessage());
      return new SinkTransaction.Failed(
          "the lane's producer id cannot be confirmed: " + e.getMessage(), false);
    }
    Producer<String, byte[]> p = producer;
    boolean committing = false;
    BatchFate batch = new BatchFate(events);
    fate = batch;
    try {
      identity.begun();
      p.beginTransaction();
      Verdict[] verdicts = new Verdict[events.size()];
      Map<TopicPartition, Long> written = new HashMap<>();
      Failure sinkFailure = sender.sendAll(p, events, verdicts, written, batch);
      if (sinkFailure != null) {
        checkHanging = true; // the broker may be gone with the transaction open
        rollBack(p, batch);
        return new SinkTransaction.Failed(sinkFailure.verdict().error(), false);
      }
      if (Arrays.stream(verdicts).anyMatch(v -> v != null)) {
        rollBack(p, batch);
        for (int i = 0; i < verdicts.length; i++) {
          if (verdicts[i] == null) {
            verdicts[i] = Verdict.published(); // rolled back with the rest, not at fault
          }
        }
        return new SinkTransaction.Aborted(Arrays.asList(verdicts));
      }
      RecordMetadata m;
      try {
        m = sender.sendLedgerRecord(p, ledgerTopic, lane, ledger);
      } catch (KafkaException e) {
        if (e instanceof org.apache.kafka.common.errors.TimeoutException) {
          log.warn(
              "pipeline {} lane {}: {}; the transaction is aborted",
              pipeline,
              lane,
              e.getMessage());
        }
        return failedOrFenced(e, false, events.size());
      }
      TopicPartition ledgerPartition = new TopicPartition(m.topic(), m.partition());
      written.merge(ledgerPartition, m.offset(), Math::max);
      committing = true;
      batch.commitAsked(ledgerPartition, m.offset());
      p.commitTransaction();
      if (!hanging.markersWritten(identity.producerId(), written, sendTimeout)) {
        batch.markersUnconfirmed();
        checkHanging = true;
        log.warn(
            "pipeline {} lane {}: the commit was accepted, but its markers were not written on every"
                + " partition it wrote within send-timeout; the batch is in doubt",
            pipeline,
            lane);
        return new SinkTransaction.Failed(
            "the commit's markers were not written within send-timeout", true);
      }
      batch.markersConfirmed();
      return new SinkTransaction.Committed(new LedgerPosition(lane, m.offset()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      discard();
      batch.endUnknown();
      return new SinkTransaction.Failed("interrupted", committing);
    } catch (RuntimeException e) {
      return failedOrFenced(e, committing, events.size());
    }
  }

  /** Aborts the batch's transaction; the batch is rolled back, or abandoned when that failed. */
  private void rollBack(Producer<String, byte[]> p, BatchFate batch) {
    ended(batch, abortQuietly(p));
  }

  /** The batch's transaction was aborted ({@code aborted}) or may still be open. */
  private static void ended(BatchFate batch, boolean aborted) {
    if (aborted) {
      batch.rolledBack();
    } else {
      batch.endUnknown();
    }
  }

  private SinkTransaction failedOrFenced(RuntimeException e, boolean committing, int size) {
    if (FailureClassifier.isFence(e)) {
      fenced = true;
      discard();
      log.warn(
          "pipeline {} lane {}: the transactional producer '{}' was fenced: another instance took"
              + " over; standing down without settling",
          pipeline,
          lane,
          transactionalId);
      return new SinkTransaction.Fenced(
          transactionalId + " was fenced by another instance: " + FailureClassifier.describe(e));
    }
    checkHanging = true; // the broker may be gone with the transaction open
    String error = "Kafka transaction failed: " + FailureClassifier.describe(e);
    boolean aborted = producer != null && abortQuietly(producer);
    if (!aborted) {
      discard(); // a new producer's registration ends the open transaction, either way
    }
    BatchFate batch = fate;
    if (batch != null && batch.open()) {
      ended(batch, aborted);
    }
    boolean inDoubt = committing && !aborted;
    if (!inDoubt && !(e instanceof RetriableException) && committing) {
      // The commit itself was refused and the transaction is aborted: no event is known to be at
      // fault (the pipeline splits the batch to find out).
      log.warn("pipeline {} lane {}: {}; aborted", pipeline, lane, error);
      return new SinkTransaction.Aborted(Collections.nCopies(size, Verdict.published()));
    }
    return new SinkTransaction.Failed(error, inDoubt);
  }

  /** A new producer, registered with the coordinator (which fences earlier ones). */
  private void register() {
    producer = factory.producer(config);
    try {
      producer.initTransactions();
    } catch (RuntimeException e) {
      discard();
      throw e;
    }
  }

  private boolean abortQuietly(Producer<String, byte[]> p) {
    try {
      p.abortTransaction();
      return true;
    } catch (RuntimeException e) {
      if (FailureClassifier.isFence(e)) {
        fenced = true; // never registered again before the next activation's fence()
      }
      log.debug(
          "pipeline {} lane {}: abort failed: {}", pipeline, lane, FailureClassifier.describe(e));
      discard();
      return false;
    }
  }

  /**
   * Looks for and aborts what the broker left open of the lane's earlier producers ({@link
   * HangingCheck}); until it succeeds, the lane does not publish.
   */
  private void abortHanging(Duration timeout) {
    Producer<String, byte[]> p = producer;
    hangingCheck.run(fate, () -> hangingCheck.writeDistrustMarker(p, this::abortQuietly), timeout);
    checkHanging = false;
  }

  /**
   * The ledger was read after a fence ({@code settled}: the watermark it was read from): the lane's
   * last batch, if the coordinator decided it, learns which way (committed, distrusted or aborted).
   * Runs on the caller's thread: a decided batch is no longer touched by the lane's, which may be
   * busy with its next transaction.
   */
  void ledgerRead(LedgerTopic.Read read, Map<Integer, Long> settled) {
    BatchFate batch = fate;
    if (batch != null) {
      batch.decideFrom(read, settled, lane);
    }
  }

  /** The lane's last batch's state; for tests. */
  BatchFate.State lastBatch() {
    BatchFate batch = fate;
    return batch == null ? null : batch.state();
  }

  /** The lane's checks for hanging transactions (their counts); for tests. */
  HangingCheck hangingCheck() {
    return hangingCheck;
  }

  private void discard() {
    Producer<String, byte[]> p = producer;
    producer = null;
    if (p != null) {
      checkHanging = true;
      try {
        p.close(Duration.ZERO);
      } catch (RuntimeException e) {
        log.debug("pipeline {} lane {}: close failed: {}", pipeline, lane, e.toString());
      }
    }
  }

  void close(Duration timeout) {
    Future<?> done = thread.submit(this::discard);
    thread.shutdown();
    try {
      done.get(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      log.debug("pipeline {} lane {}: closing: {}", pipeline, lane, e.toString());
    }
    thread.shutdownNow();
  }
}
