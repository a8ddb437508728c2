package io.outbox.sink.kafka;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lane's transactional producer id and epoch as the coordinator hands them out, and every id the
 * lane registered so far (issue #30 point 5). Under transaction protocol v2 (KIP-890) the epoch is
 * bumped at every transaction's end and the id replaced when the epochs run out: the lane counts
 * its transactions since it last learned them, and asks again before a transaction that may come
 * within {@link #EPOCH_MARGIN} epochs of the end. Lane thread only.
 */
final class ProducerIdentity {

  private static final Logger log = LoggerFactory.getLogger(ProducerIdentity.class);

  /**
   * How close to the end of its epochs ({@code Short.MAX_VALUE}) a producer id may come before the
   * lane asks the coordinator for its current one before each transaction: a stale id made {@link
   * HangingTransactions#markersWritten} answer at once.
   */
  static final int EPOCH_MARGIN = 16;

  private final String pipeline;
  private final int lane;
  private final String transactionalId;
  private final Set<Long> registered = new HashSet<>();
  private long producerId = -1; // -1 if unknown
  private int producerEpoch = -1; // when last learned; -1 if unknown
  private int transactionsSinceLearned; // begun since (each bumps the epoch under protocol v2)

  ProducerIdentity(String pipeline, int lane, String transactionalId) {
    this.pipeline = pipeline;
    this.lane = lane;
    this.transactionalId = transactionalId;
  }

  /** The current producer id, -1 when unknown (not authorized to describe the id). */
  long producerId() {
    return producerId;
  }

  /** Every producer id the lane registered so far: their open transactions are the lane's. */
  Set<Long> registered() {
    return Set.copyOf(registered);
  }

  /** The coordinator's answer: the id and epoch now ({@code -1}: unknown). */
  void learned(long producerId, int producerEpoch) {
    if (producerId >= 0) {
      registered.add(producerId);
    }
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    transactionsSinceLearned = 0;
  }

  /**
   * Before a transaction whose epoch may be among the producer id's last ones (the epoch when last
   * learned plus the transactions begun since), asks the coordinator for the current id and epoch:
   * the id the commit check looks for must be the one this transaction writes with. Under protocol
   * v1 the epoch does not move, and the count brings one question per {@code Short.MAX_VALUE -
   * EPOCH_MARGIN} transactions. Then counts the transaction.
   *
   * @throws IllegalStateException when the coordinator does not answer within {@code timeout}
   */
  void beforeTransaction(HangingTransactions coordinator, Duration timeout) {
    if (producerId >= 0
        && producerEpoch >= 0
        && producerEpoch + transactionsSinceLearned >= Short.MAX_VALUE - EPOCH_MARGIN) {
      HangingTransactions.Identity now = coordinator.current(transactionalId, timeout);
      if (now.producerId() != producerId) {
        log.info(
            "pipeline {} lane {}: the coordinator replaced the producer id of '{}' ({} -> {}) as"
                + " its epochs ran out",
            pipeline,
            lane,
            transactionalId,
            producerId,
            now.producerId());
      }
      learned(now.producerId(), now.producerEpoch());
    }
  }

  /** A transaction begins (its end bumps the epoch under protocol v2). */
  void begun() {
    transactionsSinceLearned++;
  }
}
