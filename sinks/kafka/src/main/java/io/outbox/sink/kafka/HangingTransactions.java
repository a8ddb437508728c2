package io.outbox.sink.kafka;

import static io.outbox.sink.kafka.KafkaTimeouts.ms;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.AbortTransactionOptions;
import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeProducersOptions;
import org.apache.kafka.clients.admin.DescribeProducersResult.PartitionProducerState;
import org.apache.kafka.clients.admin.DescribeTransactionsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds and aborts the transactions of a lane's earlier producers that partitions still hold open
 * although the broker's transaction coordinator no longer tracks them: "hanging" transactions.
 *
 * <p>Seen with a Kafka 4.3 broker killed while a lane committed: once the broker was back and the
 * lane's new producer registered (which should end every earlier transaction of its id), the
 * coordinator reported the id idle, yet the earlier transaction's records (events and ledger
 * record) were still open on every partition it wrote, its last stable offset stuck. Left alone,
 * such a transaction is committed by the next commit marker the same producer id writes to that
 * partition (the lane's next transaction): the events of a batch the ledger said was not committed
 * appear to {@code read_committed} consumers after the lane sent them again, as duplicates.
 * Aborting them before the lane's first transaction makes the ledger's answer true: not committed,
 * sent again.
 */
class HangingTransactions { // not final: a test scripts the broker's answers

  private static final Logger log = LoggerFactory.getLogger(HangingTransactions.class);

  private final String pipeline;
  private final KafkaClients clients;
  private final ProducerStates producerStates;
  private final Ticker ticker;
  // Whether commits are confirmed per producer (describeProducers); cleared, once, when the
  // principal may not describe the producers of a topic it writes.
  private volatile boolean perProducer = true;

  HangingTransactions(String pipeline, KafkaClients clients, String ledgerTopic, Ticker ticker) {
    this.pipeline = pipeline;
    this.clients = clients;
    this.ticker = ticker;
    this.producerStates = new ProducerStates(pipeline, ledgerTopic, ticker);
  }

  /**
   * What {@link #find} found: the transactional id's current producer id and epoch, and the
   * transactions of its earlier producers still open, per partition ({@link #abortAll} aborts them
   * with what the broker said of each, in {@code states}; {@link BatchFate#resolve} says what they
   * mean).
   */
  record Found(
      long producerId,
      int producerEpoch,
      List<BatchFate.Hanging> hanging,
      Map<BatchFate.Hanging, ProducerState> states) {

    Found {
      hanging = List.copyOf(hanging);
      states = Map.copyOf(states);
    }

    /** Nothing found, or nothing could be checked ({@code -1}: not authorized). */
    static Found none(long producerId, int producerEpoch) {
      return new Found(producerId, producerEpoch, List.of(), Map.of());
    }

    /** The same answer with {@code hanging} instead (a test scripts the findings). */
    Found withHanging(List<BatchFate.Hanging> hanging) {
      return new Found(producerId, producerEpoch, hanging, states);
    }
  }

  /** A transactional id's producer id and epoch as its coordinator has them now. */
  record Identity(long producerId, int producerEpoch) {}

  /**
   * {@code transactionalId}'s producer id and epoch now ({@code describeTransactions}): under
   * transaction protocol v2 (KIP-890) the epoch is bumped at the end of every transaction, and the
   * producer id replaced when the epoch runs out, so a lane learns its producer id again before
   * that happens ({@link TransactionalLane}).
   *
   * @throws IllegalStateException when the broker does not answer within {@code timeout}
   */
  Identity current(String transactionalId, Duration timeout) {
    Deadline deadline = ticker.deadline(timeout);
    try {
      TransactionDescription d = describe(clients.admin(), transactionalId, deadline);
      return new Identity(d.producerId(), d.producerEpoch());
    } catch (ExecutionException | TimeoutException e) {
      throw unavailable("describing the transactional id '" + transactionalId + "'", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while describing " + transactionalId, e);
    }
  }

  /**
   * Finds the open transactions of {@code transactionalId}'s earlier producers: its current
   * producer id at an older epoch, and the producer ids in {@code earlier} (a producer id the
   * coordinator replaced). Call it right after the lane's producer registered (or after a failure),
   * before the lane's next transaction; then {@link #abortAll} (after a distrust marker, when
   * {@link BatchFate#resolve} says so).
   *
   * <p>{@code everywhere}: on every partition of the cluster (internal topics aside), as at an
   * activation, when what earlier instances wrote with this id is unknown. Otherwise only on the
   * lane's ledger partition and the partitions of {@code written}: after the lane's own transaction
   * failed, in the activation whose first check covered the rest, nothing else can hold one (issue
   * #30 point 3: a cluster-wide check per failure cost admin calls in proportion to the cluster).
   *
   * <p>Safe because the lane reports a batch committed only once its commit markers are written on
   * every partition it wrote ({@link #markersWritten}): a hanging transaction holds no batch the
   * relay settled from a commit, only batches whose outcome the ledger decides.
   *
   * <p>A partition that does not answer within {@code timeout} (its leader offline, say) stops the
   * check only if it belongs to the ledger or to a topic in {@code written}: a topic this lane
   * wrote since the process started. Any other is left unchecked, with a WARN naming it (issue #30
   * point 3: one offline partition of an unrelated topic stopped every exactly-once pipeline of the
   * cluster). A hanging transaction there, if the lane wrote there in an earlier run, would be
   * committed by its next commit marker on that partition: those events are read twice (at least
   * once, docs/design.md).
   *
   * @param ledger the lane's ledger partition
   * @param written the topics the lane wrote since the process started
   * @throws IllegalStateException when the broker does not answer within {@code timeout} for the
   *     transactional id or a partition of the lane's (the lane must not publish)
   */
  Found find(
      String transactionalId,
      TopicPartition ledger,
      Set<Long> earlier,
      Set<String> written,
      boolean everywhere,
      Duration timeout) {
    Deadline deadline = ticker.deadline(timeout);
    Admin admin = clients.admin();
    TransactionDescription current;
    try {
      current = describe(admin, transactionalId, deadline);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof AuthorizationException) {
        log.warn(
            "pipeline {}: cannot check for hanging transactions of '{}' (not authorized to describe"
                + " it: {}); a transaction the broker lost after a crash would then be committed by"
                + " this producer's next commit (docs/operations.md, \"Hanging transactions\")",
            pipeline,
            transactionalId,
            e.getCause().getMessage());
        return Found.none(-1, -1);
      }
      throw unavailable("describing the transactional id '" + transactionalId + "'", e);
    } catch (TimeoutException e) {
      throw unavailable("describing the transactional id '" + transactionalId + "'", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while checking for hanging transactions", e);
    }
    Map<TopicPartition, PartitionProducerState> states =
        producerStates.of(admin, everywhere, written, ledger, deadline);
    List<BatchFate.Hanging> hanging = new ArrayList<>();
    Map<BatchFate.Hanging, ProducerState> found = new HashMap<>();
    for (Map.Entry<TopicPartition, PartitionProducerState> e : states.entrySet()) {
      for (ProducerState p : e.getValue().activeProducers()) {
        boolean ours =
            p.producerId() == current.producerId()
                ? p.producerEpoch() < current.producerEpoch()
                : earlier.contains(p.producerId());
        if (ours && p.currentTransactionStartOffset().isPresent()) {
          BatchFate.Hanging h =
              new BatchFate.Hanging(e.getKey(), p.producerId(), p.producerEpoch());
          hanging.add(h);
          found.put(h, p);
          log.warn(
              "pipeline {}: partition {} holds an open transaction of an earlier producer of '{}'"
                  + " (producer id {}, epoch {}, from offset {}) that the broker's coordinator no"
                  + " longer tracks (now epoch {}, {}): a hanging transaction, left by a broker"
                  + " crash. It is aborted, so that it is neither stuck nor committed later by"
                  + " this producer",
              pipeline,
              e.getKey(),
              transactionalId,
              p.producerId(),
              p.producerEpoch(),
              p.currentTransactionStartOffset().getAsLong(),
              current.producerEpoch(),
              current.state());
        }
      }
    }
    return new Found(current.producerId(), current.producerEpoch(), hanging, found);
  }

  /**
   * Aborts the hanging transactions {@link #find} found ({@code Admin.abortTransaction}, what
   * {@code kafka-transactions.sh abort} does).
   *
   * @return the partitions where one was aborted
   * @throws IllegalStateException when one cannot be aborted (the lane must not publish: its next
   *     commit would commit the hanging records too)
   */
  List<TopicPartition> abortAll(Found found, Duration timeout) {
    Deadline deadline = ticker.deadline(timeout);
    List<TopicPartition> aborted = new ArrayList<>();
    for (BatchFate.Hanging h : found.hanging()) {
      ProducerState p = found.states().get(h);
      if (p == null) {
        throw new IllegalStateException("no hanging transaction was found as " + h);
      }
      abort(clients.admin(), h.partition(), p, deadline);
      aborted.add(h.partition());
    }
    return aborted;
  }

  /**
   * Whether the commit markers of a transaction of producer {@code producerId} are written on every
   * partition it wrote ({@code written}: per partition, its last record's offset), within {@code
   * timeout}. {@code commitTransaction} returns once the coordinator decided, before it writes the
   * markers; a Kafka 4.3/4.4 broker restarted in between has been seen to drop them (KAFKA-20734)
   * and even to report the commit complete, leaving the transaction open on its partitions.
   *
   * <p>Asks each partition whether this producer still has a transaction open there ({@code
   * describeProducers}): per producer, so another lane's or application's open transaction on the
   * same partition does not hold it up, as the last stable offset would. When the producer id is
   * unknown ({@code -1}: not authorized to describe the transactional id), falls back to the last
   * stable offsets.
   */
  boolean markersWritten(long producerId, Map<TopicPartition, Long> written, Duration timeout)
      throws InterruptedException {
    Deadline deadline = ticker.deadline(timeout);
    Set<TopicPartition> open = new HashSet<>(written.keySet());
    long pause = 1;
    while (true) {
      try {
        if (producerId >= 0 && perProducer) {
          Map<TopicPartition, PartitionProducerState> states =
              clients
                  .admin()
                  .describeProducers(open, new DescribeProducersOptions().timeoutMs(ms(deadline)))
                  .all()
                  .get(ms(deadline), TimeUnit.MILLISECONDS);
          open.removeIf(
              tp ->
                  states.get(tp).activeProducers().stream()
                      .noneMatch(
                          p ->
                              p.producerId() == producerId
                                  && p.currentTransactionStartOffset().isPresent()));
        } else {
          Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
          open.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
          Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> stable =
              clients
                  .admin()
                  .listOffsets(
                      latest,
                      new ListOffsetsOptions(IsolationLevel.READ_COMMITTED).timeoutMs(ms(deadline)))
                  .all()
                  .get(ms(deadline), TimeUnit.MILLISECONDS);
          open.removeIf(tp -> stable.get(tp).offset() > written.get(tp));
        }
        if (open.isEmpty()) {
          return true;
        }
      } catch (ExecutionException | TimeoutException e) {
        if (e.getCause() instanceof AuthorizationException && perProducer) {
          perProducer = false;
          log.warn(
              "pipeline {}: not authorized to describe the producers of the topics written ({});"
                  + " commits are confirmed from the partitions' last stable offsets instead, which"
                  + " also wait for other producers' open transactions there (READ on the topics"
                  + " avoids that)",
              pipeline,
              e.getCause().getMessage());
          continue;
        }
        log.debug(
            "pipeline {}: checking the commit markers failed: {}",
            pipeline,
            FailureClassifier.describe(e));
      }
      if (deadline.passed()) {
        return false;
      }
      TimeUnit.MILLISECONDS.sleep(pause);
      pause = Math.min(50, pause * 2);
    }
  }

  private static TransactionDescription describe(Admin admin, String id, Deadline deadline)
      throws ExecutionException, TimeoutException, InterruptedException {
    return admin
        .describeTransactions(
            List.of(id), new DescribeTransactionsOptions().timeoutMs(ms(deadline)))
        .description(id)
        .get(ms(deadline), TimeUnit.MILLISECONDS);
  }

  private void abort(Admin admin, TopicPartition tp, ProducerState p, Deadline deadline) {
    AbortTransactionSpec spec =
        new AbortTransactionSpec(
            tp, p.producerId(), (short) p.producerEpoch(), p.coordinatorEpoch().orElse(0));
    try {
      admin
          .abortTransaction(spec, new AbortTransactionOptions().timeoutMs(ms(deadline)))
          .all()
          .get(ms(deadline), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "pipeline "
              + pipeline
              + ": the hanging transaction on "
              + tp
              + " (producer id "
              + p.producerId()
              + ", epoch "
              + p.producerEpoch()
              + ", from offset "
              + p.currentTransactionStartOffset().getAsLong()
              + ") cannot be aborted: "
              + FailureClassifier.describe(e.getCause())
              + (e.getCause() instanceof AuthorizationException
                  ? ". The relay's principal needs the right to write transaction markers (CLUSTER"
                      + " ClusterAction); or abort it yourself: kafka-transactions.sh"
                      + " --bootstrap-server <broker> abort --topic "
                      + tp.topic()
                      + " --partition "
                      + tp.partition()
                      + " --start-offset "
                      + p.currentTransactionStartOffset().getAsLong()
                  : "")
              + ". The lane does not publish until it is aborted",
          e.getCause());
    } catch (TimeoutException e) {
      throw unavailable("aborting the hanging transaction on " + tp, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while aborting a hanging transaction", e);
    }
  }

  private IllegalStateException unavailable(String what, Exception e) {
    return unavailable(pipeline, what, e);
  }

  /** The check failed while doing {@code what}: the broker did not answer, or refused. */
  static IllegalStateException unavailable(String pipeline, String what, Exception e) {
    Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    return new IllegalStateException(
        "pipeline "
            + pipeline
            + ": checking for hanging transactions failed while "
            + what
            + ": "
            + FailureClassifier.describe(cause),
        cause);
  }
}
