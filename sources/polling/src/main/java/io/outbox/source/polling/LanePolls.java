package io.outbox.source.polling;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.postgres.OutstandingClaims;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The lanes' claims of the polling source: a lane runs a claim transaction when woken or when the
 * poll interval passed, and waits for wake-ups in between; a claim that found rows wakes the other
 * lanes while inserts skip their notification ({@link WakeGate#quiet}).
 */
final class LanePolls {

  private static final long NOT_IDLE = -1; // wake-up generations start at 0

  private final PollingSettings settings;
  private final OutstandingClaims outstanding;
  private final WakeUps wakeUps;
  private final LeaderLock leader;
  private final Supplier<WakeGate> gate;
  private final BooleanSupplier closed;
  private final String pipeline;
  private final String displayTable;
  // Per lane, touched only by the lane's claim() (one at a time, ordered by `outstanding`): the
  // wake-up generation and time of the lane's last query that found nothing.
  private final long[] idleGeneration;
  private final long[] idleSince;
  private final LongAdder claimQueries = new LongAdder();
  private final Ticker ticker;

  /**
   * @param gate the wake gate, {@code null} while there is none
   * @param closed whether the source is closed
   */
  LanePolls(
      PollingSettings settings,
      int lanes,
      OutstandingClaims outstanding,
      WakeUps wakeUps,
      LeaderLock leader,
      Supplier<WakeGate> gate,
      BooleanSupplier closed,
      String pipeline,
      String displayTable,
      Ticker ticker) {
    this.settings = settings;
    this.ticker = ticker;
    this.outstanding = outstanding;
    this.wakeUps = wakeUps;
    this.leader = leader;
    this.gate = gate;
    this.closed = closed;
    this.pipeline = pipeline;
    this.displayTable = displayTable;
    this.idleGeneration = new long[lanes];
    this.idleSince = new long[lanes];
    Arrays.fill(idleGeneration, NOT_IDLE);
  }

  /** The lane's claim ({@link io.outbox.relay.spi.Source#claim}). */
  Claim claim(ClaimTransactions transactions, int lane, int maxEvents, Duration maxWait)
      throws InterruptedException {
    outstanding.begin(lane);
    boolean handedOut = false;
    try {
      Deadline deadline = ticker.deadline(maxWait);
      long poll = settings.pollInterval().toNanos();
      while (!closed.getAsBoolean()) {
        checkLeadership();
        long generation = wakeUps.generation();
        long now = ticker.nanoTime();
        // An idle lane queries again only when woken or when the poll interval passed, however
        // short the caller's maxWait: idle load is one query per lane per poll interval.
        if (generation != idleGeneration[lane] || now - idleSince[lane] >= poll) {
          claimQueries.increment();
          PollingClaim claim = transactions.open(lane, maxEvents, leader::held, null);
          WakeGate g = gate.get();
          if (claim == null) {
            if (g != null) {
              g.empty(lane);
            }
            checkLeadership(); // rows found just as the leader lock was lost were given back
          } else {
            if (g != null) {
              g.found(lane);
            }
            wakeOthersWhileQuiet();
            idleGeneration[lane] = NOT_IDLE;
            handedOut = true;
            return claim;
          }
          idleGeneration[lane] = generation;
          idleSince[lane] = now;
        }
        long left = deadline.nanosLeft();
        if (left <= 0) {
          break;
        }
        long untilPoll = idleSince[lane] + poll - ticker.nanoTime();
        wakeUps.awaitChange(idleGeneration[lane], Math.max(0, Math.min(untilPoll, left)));
      }
      return Claim.empty();
    } finally {
      if (!handedOut) {
        outstanding.end(lane);
      }
    }
  }

  /**
   * A claim ahead of the lane's claim in flight ({@link io.outbox.relay.spi.Source#claimAhead}).
   */
  Claim claimAhead(ClaimTransactions transactions, int lane, int maxEvents, PollingClaim current) {
    if (closed.getAsBoolean()) {
      return Claim.empty();
    }
    checkLeadership();
    outstanding.beginAhead(lane);
    boolean handedOut = false;
    try {
      claimQueries.increment();
      PollingClaim claim = transactions.open(lane, maxEvents, leader::held, current);
      if (claim == null) {
        return Claim.empty();
      }
      wakeOthersWhileQuiet();
      handedOut = true;
      return claim;
    } finally {
      if (!handedOut) {
        outstanding.end(lane);
      }
    }
  }

  /** How many claim transactions ran so far. */
  long claimQueries() {
    return claimQueries.sum();
  }

  /**
   * While inserts may skip their notification (the wake gate is quiet), a claim that found rows
   * stands in for them: the waiting lanes look once more, so a row of theirs committed while
   * another lane was busy waits at most for one of that lane's claims.
   */
  private void wakeOthersWhileQuiet() {
    WakeGate g = gate.get();
    if (g != null && g.quiet()) {
      wakeUps.wakeAll();
    }
  }

  private void checkLeadership() {
    if (!leader.held()) {
      throw new LeadershipLostException(
          "pipeline "
              + pipeline
              + ": this instance lost its leader lock on "
              + displayTable
              + "; another instance may be active");
    }
  }
}
