package io.outbox.sink.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lane's check for what the broker left open of its earlier producers: finds the hanging
 * transactions ({@link HangingTransactions}), resolves them with {@link BatchFate#resolve}, writes
 * the distrust marker first when a transaction hangs apart from its ledger record (a crash between
 * the abort and the marker must not leave the record trusted while its events are aborted), then
 * aborts them. Every partition of the cluster after an activation (what an earlier instance wrote
 * is unknown), else the lane's ledger partition and the topics it wrote (issue #30 point 3). Lane
 * thread only, but for the counts read by tests.
 */
final class HangingCheck {

  private static final Logger log = LoggerFactory.getLogger(TransactionalLane.class);

  private final String pipeline;
  private final int lane;
  private final String transactionalId;
  private final TopicPartition ledger;
  private final HangingTransactions hanging;
  private final ProducerIdentity identity;
  private final Set<String> writtenTopics; // the lane's: every topic it sent to since the start
  private final Duration sendTimeout;
  // The next check covers every partition of the cluster: set by an activation's fence, cleared
  // once such a check succeeded.
  private boolean everywhere = true;
  private volatile int aborted;
  // Per partial commit, the partitions where the broker had committed the transaction.
  private final List<Set<TopicPartition>> partiallyCommitted = new CopyOnWriteArrayList<>();

  HangingCheck(
      String pipeline,
      int lane,
      String transactionalId,
      String ledgerTopic,
      HangingTransactions hanging,
      ProducerIdentity identity,
      Set<String> writtenTopics,
      Duration sendTimeout) {
    this.pipeline = pipeline;
    this.lane = lane;
    this.transactionalId = transactionalId;
    this.ledger = new TopicPartition(ledgerTopic, lane);
    this.hanging = hanging;
    this.identity = identity;
    this.writtenTopics = writtenTopics;
    this.sendTimeout = sendTimeout;
  }

  /** This instance just became active: the next check covers every partition of the cluster. */
  void activation() {
    everywhere = true;
  }

  /**
   * Runs the check.
   *
   * @param fate the lane's last batch (null before the first)
   * @param writeDistrustMarker writes the lane's distrust marker, or throws
   * @throws IllegalStateException when the broker does not answer, or a marker or an abort fails
   *     (the lane must not publish; the next check finds the same transactions)
   */
  void run(BatchFate fate, Runnable writeDistrustMarker, Duration timeout) {
    boolean activation = everywhere;
    HangingTransactions.Found found =
        hanging.find(
            transactionalId,
            ledger,
            identity.registered(),
            Set.copyOf(writtenTopics),
            everywhere,
            timeout);
    identity.learned(found.producerId(), found.producerEpoch());
    // At an activation, what hangs may be any earlier instance's: its batches are unknown.
    BatchFate last = !activation && fate != null && fate.open() ? fate : null;
    BatchFate.Resolution resolution = BatchFate.resolve(found.hanging(), ledger, last);
    if (resolution.distrustFirst()) {
      writeDistrustMarker.run();
    }
    aborted += hanging.abortAll(found, timeout).size();
    everywhere = false;
    if (last != null) {
      last.resolved(resolution);
    }
    if (!resolution.readTwice().isEmpty()) {
      // The broker wrote the commit markers of the lane's last transaction on some partitions and
      // dropped them on the others (KAFKA-20734): what was committed stays, the rest is aborted,
      // and the whole batch goes out again.
      Set<TopicPartition> kept = resolution.readTwice();
      partiallyCommitted.add(kept);
      log.warn(
          "pipeline {} lane {}: the broker had committed the lane's last transaction on {} only and"
              + " left it open elsewhere; the open part is aborted and the batch goes out again, so"
              + " its events on {} are delivered twice: {} {}",
          pipeline,
          lane,
          kept,
          kept,
          KafkaSinkProvider.SENT_TWICE,
          last.eventIdsOn(kept));
    }
  }

  /**
   * Writes, in a transaction of its own, a distrust marker to the lane's ledger partition ({@link
   * LedgerCodec#DISTRUST_LINE}) before a hanging transaction decided apart from its ledger record
   * is aborted: every later read of the ledger, by any lane, instance or restart, drops the lane's
   * records before it and sends their events again.
   *
   * @param abortQuietly aborts the producer's transaction after a failure (the lane's)
   * @throws IllegalStateException when it cannot be written (nothing is aborted then; the lane does
   *     not publish, and its next check finds the same transaction)
   */
  void writeDistrustMarker(
      Producer<String, byte[]> p,
      java.util.function.Predicate<Producer<String, byte[]>> abortQuietly) {
    try {
      p.beginTransaction();
      p.send(
              new ProducerRecord<>(
                  ledger.topic(), lane, "lane-" + lane, LedgerCodec.encodeDistrust(lane)))
          .get(sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
      p.commitTransaction();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      abortQuietly.test(p);
      throw new IllegalStateException("interrupted while writing the ledger's distrust marker", e);
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      abortQuietly.test(p);
      throw new IllegalStateException(
          "the ledger's distrust marker for lane "
              + lane
              + " cannot be written: "
              + FailureClassifier.describe(e instanceof ExecutionException ? e.getCause() : e),
          e);
    }
    log.warn(
        "pipeline {} lane {}: a hanging transaction decided apart from its ledger record is to be"
            + " aborted; a distrust marker is in the ledger first, so the lane's records before it"
            + " are not trusted by any later read, and their events are sent again (at least once)",
        pipeline,
        lane);
  }

  /** How many hanging transactions (partitions) the checks aborted. */
  int aborted() {
    return aborted;
  }

  /** Per partial commit so far, the partitions where the broker had committed the transaction. */
  List<Set<TopicPartition>> partiallyCommitted() {
    return List.copyOf(partiallyCommitted);
  }
}
