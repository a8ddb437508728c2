package io.outbox.relay.pipeline;

import io.outbox.relay.spi.LedgerEntry;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.LedgerRead;
import io.outbox.relay.spi.LedgerWatermark;
import io.outbox.relay.spi.TransactionalSink;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settles, before anything is sent again, the batches an exactly-once pipeline committed to the
 * broker but did not settle in the database (the relay died, or the settlement failed, in between):
 * reads the ledger past the database's watermark with {@code read_committed} and marks those events
 * published without sending them. Runs on activation for every lane, after the sink fenced the
 * earlier instance, and for one lane after a commit whose outcome is unknown.
 */
final class LedgerRecovery {

  private static final Logger log = LoggerFactory.getLogger(LedgerRecovery.class);

  private final String pipeline;
  private final TransactionalSink sink;
  private final LedgerWatermark watermark;
  private final PipelineStats stats;
  private final Duration timeout;
  private volatile long lastOffset = -1;

  LedgerRecovery(
      String pipeline,
      TransactionalSink sink,
      LedgerWatermark watermark,
      PipelineStats stats,
      Duration timeout) {
    this.pipeline = pipeline;
    this.sink = sink;
    this.watermark = watermark;
    this.stats = stats;
    this.timeout = timeout;
  }

  /**
   * Once the database confirmed the lease (the watermark's fenced read), fences the earlier
   * publisher of {@code lanes}, then settles their ledger partitions ({@code everything}: every
   * partition, also those of lanes a former configuration had).
   *
   * @return how many ledger records were settled
   * @throws io.outbox.relay.spi.LedgerException when the ledger cannot be trusted
   * @throws io.outbox.relay.spi.LeadershipLostException when this instance lost the active role
   */
  int recover(Set<Integer> lanes, boolean everything) {
    // The database confirms the lease first (the watermark's read is fenced): an instance cut off
    // from it, or that lost the role, registers nothing, which would fence the active one's
    // producers (issue #30 point 2).
    Map<Integer, Long> settled = watermark.settled();
    if (everything) {
      sink.fence(List.copyOf(lanes));
    } else {
      lanes.forEach(sink::fenceInDoubt);
    }
    LedgerRead read = sink.readLedger(settled, timeout);
    Map<Integer, Long> last = new HashMap<>(settled);
    int records = 0;
    int rows = 0;
    for (LedgerEntry e : read.entries()) {
      if (!everything && !lanes.contains(e.position().partition())) {
        continue; // another lane's, settled by that lane
      }
      rows += watermark.settleFromLedger(e.position(), e.record().events());
      records++;
      lastOffset = Math.max(lastOffset, e.position().offset());
      last.merge(e.position().partition(), e.position().offset(), Math::max);
    }
    passAbortedTails(lanes, everything, read.decidedTo(), last);
    stats.ledgerBatchesSettled.increment(records);
    stats.ledgerEventsSettled.increment(rows);
    if (records > 0) {
      log.warn(
          "pipeline {}: settled {} in-doubt batch(es) from the ledger '{}' ({} row(s) were still"
              + " unsettled; their events were not sent again)",
          pipeline,
          records,
          sink.ledgerName(),
          rows);
    } else {
      log.info(
          "pipeline {}: ledger '{}' checked, nothing in doubt (settled up to {})",
          pipeline,
          sink.ledgerName(),
          settled);
    }
    return records;
  }

  /**
   * Moves the watermark of each partition read past an aborted tail: records of transactions that
   * were aborted after the last settled record. Left behind them, the watermark would point at
   * records that retention deletes in time, and the next read would take their absence for lost
   * unsettled records and refuse to go on (a lane of a former configuration never settles again;
   * issue #30 point 4). Only partitions this recovery settles, and only up to where every
   * transaction is decided; a partition never settled is left alone (its read starts at its
   * beginning).
   */
  private void passAbortedTails(
      Set<Integer> lanes,
      boolean everything,
      Map<Integer, Long> decidedTo,
      Map<Integer, Long> last) {
    for (Map.Entry<Integer, Long> d : decidedTo.entrySet()) {
      int partition = d.getKey();
      Long settledTo = last.get(partition);
      if (settledTo == null || !everything && !lanes.contains(partition)) {
        continue;
      }
      // The settled record's commit marker is at settledTo + 1: anything after it was aborted.
      long to = d.getValue() - 1;
      if (to > settledTo + 1) {
        watermark.settleFromLedger(new LedgerPosition(partition, to), List.of());
        log.info(
            "pipeline {}: ledger partition {} holds only aborted transactions from offset {} to {};"
                + " its watermark moves past them",
            pipeline,
            partition,
            settledTo + 2,
            to);
      }
    }
  }

  /** The highest ledger offset settled from the ledger by this instance, or -1. */
  long lastOffset() {
    return lastOffset;
  }
}
