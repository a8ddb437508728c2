package io.outbox.relay.pipeline;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.LedgerException;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One lane of a pipeline: claims a batch of its keys ({@link LaneClaimer}), publishes it ({@link
 * LanePublisher}), waits for every verdict and settles it ({@link LaneSettlement}), then the next.
 * At most one batch per lane is being published, so a key's events never overtake each other; lanes
 * run in parallel.
 *
 * <p>Pipelining within the lane, when the source supports it ({@link Source#claimAhead}): while a
 * full batch is being published the lane claims the next one, and once every event of the batch was
 * published or dead-lettered it publishes the next batch at once and writes the previous batch's
 * settlement meanwhile. A batch with any other verdict (a retry, an outage, an event held back) is
 * settled first and the batch claimed ahead is released unpublished, so a failing event still holds
 * back its key's later events.
 */
final class Lane implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(Lane.class);
  private static final Duration CLAIM_WAIT = Duration.ofMillis(500);

  private final int index;
  private final LaneHost host;
  private final String pipeline;
  private final Clock clock;
  private final SinkGate gate;
  private final Ticker ticker;
  private final Reconnect reconnect;
  private final SettlementPlanner planner;
  private final PipelineStats stats;
  private final int batchSize;
  private final LaneProgress progress;
  private final LaneClaimer claimer;
  private final LanePublisher publisher;
  private final LaneSettlement settlement;

  Lane(int index, LaneHost host, LaneContext c) {
    this.index = index;
    this.host = host;
    this.pipeline = c.pipeline();
    this.clock = c.clock();
    this.gate = c.gate();
    this.ticker = c.ticker();
    this.reconnect = new Reconnect(c.errorBackoff(), ticker);
    this.progress = new LaneProgress(ticker);
    this.planner = c.planner();
    this.stats = c.stats();
    this.batchSize = c.batchSize();
    SinkWait wait = new SinkWait(host, stats);
    SettlementRecorder recorder =
        new SettlementRecorder(
            c.pipeline(),
            c.sink(),
            c.deadLetterRouter(),
            c.stats(),
            c.gate(),
            wait,
            c.form(),
            c.tracing());
    this.claimer = new LaneClaimer(index, c);
    this.publisher = new LanePublisher(index, host, c, progress, wait, recorder);
    this.settlement = new LaneSettlement(index, c, progress, recorder);
  }

  @Override
  public void run() {
    try {
      loop();
    } catch (Error e) {
      host.fatal("lane " + index, e);
    } finally {
      try {
        // A published batch still gets its settlement written (its events were acknowledged), a
        // batch claimed ahead is released.
        claimer.releaseAhead();
        settlement.finish();
      } catch (Error e) {
        host.fatal("lane " + index, e);
      }
    }
  }

  /** What the stall watch sees of the lane. */
  LaneProgress progress() {
    return progress;
  }

  private void loop() {
    while (host.keepClaiming()) {
      try {
        Claim claim = claimer.takeAhead();
        if (claim == null) {
          settlement.settleHeld(); // nothing to overlap it with
          progress.at("waiting for the sink to become available");
          if (!gate.awaitOpen(CLAIM_WAIT)) {
            continue;
          }
          if (!settlement.recoverInDoubt()) {
            continue;
          }
          progress.at("claiming");
          claim = claimer.claim(CLAIM_WAIT);
          host.sourceAnswered(true);
          progress.progressed();
          if (claim.events().isEmpty()) {
            claim.release();
            reconnect.succeeded();
            continue;
          }
        }
        stats.batchSize.record(claim.events().size());
        process(claim);
        reconnect.succeeded();
      } catch (LeadershipLostException e) {
        host.leadershipLost(e.getMessage());
        return;
      } catch (LedgerException e) {
        host.fatal("lane " + index + " (the ledger)", e);
        return;
      } catch (SourceException e) {
        host.sourceAnswered(false);
        Duration pause = reconnect.failed();
        log.warn(
            "pipeline {} lane {}: database error, retrying in {} ms: {}",
            pipeline,
            index,
            pause.toMillis(),
            oneLine(e));
        if (!host.sleepUnlessStopping(reconnect.due())) {
          return;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        reconnect.failed();
        log.error("pipeline {} lane {}: unexpected failure", pipeline, index, e);
        if (!host.sleepUnlessStopping(reconnect.due())) {
          return;
        }
      }
    }
  }

  /**
   * Publishes the claim; its settlement is written before this returns, unless a batch claimed
   * ahead is kept: then it is held, to be written while that batch is being published. Whatever
   * happens, the claim and any batch claimed ahead end.
   */
  private void process(Claim claim) throws InterruptedException {
    boolean handedOver = false;
    try {
      long started = ticker.nanoTime();
      LanePublisher.Outcome outcome = publisher.publish(claim, () -> overlap(claim));
      if (outcome.inDoubt()) {
        settlement.markInDoubt();
      }
      if (outcome.verdicts() == null) {
        return; // released unsettled, with the batch claimed ahead (finally)
      }
      settlement.settleHeld(); // when no wave was published
      long published = ticker.nanoTime();
      stats.publishStage.record(published - started, NANOSECONDS);
      LaneSettlement.Batch done =
          new LaneSettlement.Batch(
              claim,
              planner.plan(claim.events(), Arrays.asList(outcome.verdicts())),
              clock.millis(),
              published - started,
              outcome.committed());
      handedOver = true;
      if (claimer.hasAhead() && !(done.plan().allFinal() && host.keepClaiming())) {
        claimer.releaseAhead();
      }
      if (claimer.hasAhead()) {
        settlement.hold(done);
      } else {
        settlement.settle(done);
      }
    } finally {
      if (!handedOver) {
        // A batch that ends unsettled (abandoned, in doubt, failed) releases the batch claimed
        // ahead too: that one may hold later events of its keys, and goes out only after every
        // event of this one was published or dead-lettered (Source#claimAhead); exactly-once, the
        // ledger is read first, since an abandoned transaction may still commit.
        claimer.release(claim);
        claimer.releaseAhead();
      }
    }
  }

  /**
   * Runs while the claim's first publish is on its way: writes the previous batch's settlement and
   * claims the lane's next batch ahead.
   */
  private void overlap(Claim claim) throws InterruptedException {
    settlement.settleHeld();
    // A batch short of batch-size took every row the lane had: claiming ahead would mostly find
    // the few rows committed since, at the cost of one more transaction per batch. Measured at
    // 1,000 events/s (2026-11-30, in docs/performance.md's history): less relay CPU and a lower
    // p99 without it.
    if (!host.keepClaiming() || claim.events().size() < batchSize) {
      return;
    }
    claimer.claimAhead(claim);
  }

  static String oneLine(Throwable t) {
    String m = t.getMessage();
    String text = t.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    return text.replaceAll("[\\r\\n]+", " ");
  }
}
