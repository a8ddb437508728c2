package io.outbox.relay.pipeline;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claims a lane's batches from the source: the next one when the lane has none, and one ahead while
 * a batch is being published ({@link Source#claimAhead}), kept until the lane publishes or releases
 * it. Records each claim's wake and claim stages. Used by the lane's thread only.
 */
final class LaneClaimer {
  // The lane's logger: these lines were the lane's and operators' log settings name it.
  private static final Logger log = LoggerFactory.getLogger(Lane.class);

  private final String pipeline;
  private final int index;
  private final Source source;
  private final int batchSize;
  private final PipelineStats stats;
  private final Clock clock;
  private final Ticker ticker;
  private final EventTracing tracing;
  private Claim ahead; // claimed ahead of the batch being published; publishable next

  LaneClaimer(int index, LaneContext c) {
    this.pipeline = c.pipeline();
    this.index = index;
    this.source = c.source();
    this.batchSize = c.batchSize();
    this.stats = c.stats();
    this.clock = c.clock();
    this.ticker = c.ticker();
    this.tracing = c.tracing();
  }

  /** The lane's next batch, waiting at most {@code maxWait} for one; possibly empty. */
  Claim claim(Duration maxWait) throws InterruptedException {
    long claimStarted = ticker.nanoTime();
    Instant startedAt = clock.instant();
    Claim claim = source.claim(index, batchSize, maxWait);
    logClaimed(claim, "", claimStarted);
    recordClaimed(claim, startedAt);
    return claim;
  }

  /**
   * Claims the batch after {@code inFlight} and keeps it ({@link #takeAhead}); a failure is only
   * logged: the lane's next claim meets it (or the lost leadership) again.
   */
  void claimAhead(Claim inFlight) {
    try {
      long claimStarted = ticker.nanoTime();
      Instant startedAt = clock.instant();
      Claim next = source.claimAhead(index, batchSize, inFlight);
      if (next.events().isEmpty()) {
        next.release();
        return;
      }
      ahead = next;
      logClaimed(next, " ahead", claimStarted);
      recordClaimed(next, startedAt);
    } catch (SourceException e) {
      log.debug("pipeline {} lane {}: claiming ahead failed: {}", pipeline, index, Lane.oneLine(e));
    }
  }

  /** Whether a batch claimed ahead is kept. */
  boolean hasAhead() {
    return ahead != null;
  }

  /** The batch claimed ahead, now the lane's to publish; {@code null} when none. */
  Claim takeAhead() {
    Claim a = ahead;
    ahead = null;
    return a;
  }

  /** Releases the batch claimed ahead, if any, unpublished. */
  void releaseAhead() {
    Claim a = takeAhead();
    if (a != null) {
      release(a);
    }
  }

  /** Releases {@code claim}; a failure is only logged. */
  void release(Claim claim) {
    try {
      claim.release();
    } catch (RuntimeException e) {
      log.debug("pipeline {} lane {}: release failed: {}", pipeline, index, Lane.oneLine(e));
    }
  }

  /** The wake and claim stages and the span of a claim (nothing for an empty one). */
  private void recordClaimed(Claim claim, Instant startedAt) {
    List<OutboxEvent> events = claim.events();
    if (events.isEmpty()) {
      return;
    }
    tracing.claimed(index, events, startedAt);
    long now = clock.millis();
    for (OutboxEvent e : events) {
      // A retried or delayed event waited on purpose: the wake stage is about new rows.
      if (e.attempts() == 0) {
        stats.wakeStage.record(Math.max(0, now - e.createdAt().toEpochMilli()), MILLISECONDS);
      }
    }
    long query = claim.queryNanos();
    if (query >= 0) {
      stats.claimStage.record(query, NANOSECONDS);
    }
  }

  /** The per-batch timing line (DEBUG) of a claim that returned events. */
  private void logClaimed(Claim claim, String how, long startedNanos) {
    if (log.isDebugEnabled() && !claim.events().isEmpty()) {
      log.debug(
          "pipeline {} lane {}: claimed {} events{} in {} ms",
          pipeline,
          index,
          claim.events().size(),
          how,
          (ticker.nanoTime() - startedNanos) / 1_000_000);
    }
  }
}
