package io.outbox.relay.pipeline;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.LedgerException;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a lane's settlements: a batch whose verdicts are all in is settled at once, or held while
 * the batch claimed ahead is being published, and settled meanwhile. Exactly-once, it also knows
 * when a transaction of the lane may be committed but not settled, and then settles from the ledger
 * before the lane claims again. Used by the lane's thread only.
 */
final class LaneSettlement {
  // The lane's logger: these lines were the lane's and operators' log settings name it.
  private static final Logger log = LoggerFactory.getLogger(Lane.class);

  /**
   * A batch whose verdicts are all in and whose settlement is still to be written; {@code
   * position}, exactly-once, where its last transaction's ledger record is (or {@code null}).
   */
  record Batch(
      Claim claim,
      SettlementPlanner.Plan plan,
      long ackedAtMillis,
      long publishNanos,
      LedgerPosition position) {}

  private final String pipeline;
  private final int index;
  private final LaneProgress progress;
  private final PipelineStats stats;
  private final SinkGate gate;
  private final SettlementRecorder recorder;
  private final Ticker ticker;
  private final boolean
      transactional; // exactly-once: the dead-letter copies were in the transaction
  private final LedgerRecovery recovery; // exactly-once; null when at least once

  private Batch held; // published, settlement not yet written
  // Exactly-once: a transaction of this lane may be committed but not settled (its outcome was
  // unknown, or its settlement failed); the ledger is read before anything is claimed again.
  private boolean inDoubt;

  LaneSettlement(int index, LaneContext c, LaneProgress progress, SettlementRecorder recorder) {
    this.pipeline = c.pipeline();
    this.index = index;
    this.progress = progress;
    this.stats = c.stats();
    this.gate = c.gate();
    this.recorder = recorder;
    this.ticker = c.ticker();
    this.transactional = c.transactional() != null;
    this.recovery = c.recovery();
  }

  /** Keeps {@code batch} to be settled by the next {@link #settleHeld}. */
  void hold(Batch batch) {
    held = batch;
  }

  /** Writes the settlement of the batch held, if any. */
  void settleHeld() throws InterruptedException {
    Batch b = held;
    if (b != null) {
      held = null;
      settle(b);
    }
  }

  /** Writes the batch's settlement; the claim ends whatever happens. */
  void settle(Batch b) throws InterruptedException {
    progress.at("settling");
    long started = ticker.nanoTime();
    InterruptedException interrupted = null;
    try {
      if (!transactional) {
        recorder.publishDeadLetters(b.plan().settlements(), b.claim());
      }
    } catch (InterruptedException e) {
      interrupted = e; // the copies are best effort; the table's record is not
    }
    long writing = ticker.nanoTime();
    Settled settled;
    try {
      settled =
          b.position() == null
              ? b.claim().settle(b.plan().settlements())
              : b.claim().settle(b.plan().settlements(), b.position());
    } catch (RuntimeException e) {
      if (b.position() != null) {
        inDoubt = true; // committed in Kafka, not settled: the ledger has it
      } else if (!b.claim().owned()) {
        // Published, not recorded: the instance now active sends them again (possibly late).
        stats.unrecordedAfterLeaseLoss.increment(b.plan().publishedCount());
      }
      throw e;
    }
    stats.settleStage.record(ticker.nanoTime() - writing, NANOSECONDS);
    progress.progressed();
    recorder.record(b.plan(), settled, b.ackedAtMillis());
    if (interrupted != null) {
      throw interrupted;
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "pipeline {} lane {}: {} events published in {} ms, settled in {} ms",
          pipeline,
          index,
          b.claim().events().size(),
          b.publishNanos() / 1_000_000,
          (ticker.nanoTime() - started) / 1_000_000);
    }
  }

  /** When the lane ends: a batch held still gets its settlement written (it was acknowledged). */
  void finish() {
    Batch b = held;
    held = null;
    if (b != null) {
      try {
        settle(b);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        log.warn(
            "pipeline {} lane {}: recording {} published events failed, they will be claimed"
                + " again: {}",
            pipeline,
            index,
            b.claim().events().size(),
            Lane.oneLine(e));
      }
    }
  }

  /** Exactly-once: a transaction of the lane may have been committed without being settled. */
  void markInDoubt() {
    inDoubt = true;
  }

  /**
   * Exactly-once: settles from the ledger what this lane may have committed without settling,
   * before anything is claimed again. The broker being unreachable meanwhile is an outage like any
   * other (the gate closes and probes), not a failure of the lane.
   *
   * @return whether the lane may claim: nothing was in doubt, or the ledger was read; {@code false}
   *     when the broker could not be reached
   */
  boolean recoverInDoubt() {
    if (!inDoubt) {
      return true;
    }
    progress.at("settling in-doubt batches from the ledger");
    try {
      recovery.recover(Set.of(index), false);
    } catch (LedgerException | SourceException e) {
      throw e;
    } catch (RuntimeException e) {
      // The SPI's word for "the broker cannot be reached" (TransactionalSink#readLedger, #fence).
      if (gate.reportUnavailable(
          "the ledger cannot be read to settle an in-doubt transaction: " + Lane.oneLine(e))) {
        stats.outages.increment();
      }
      return false;
    }
    inDoubt = false;
    return true;
  }
}
