package io.outbox.relay.pipeline;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.LedgerException;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.SinkTransaction;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Verdict;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One lane of a pipeline: claims a batch of its keys, publishes it, waits for every verdict and
 * settles it, then the next. At most one batch per lane is being published, so a key's events never
 * overtake each other; lanes run in parallel.
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
  private final LaneHost pipeline;
  private final Source source;
  private final Router router;
  private final SettlementPlanner planner;
  private final SinkGate gate;
  private final RetryPolicy errorBackoff;
  private final PipelineStats stats;
  private final int batchSize;
  private final SinkWait wait;
  private final SettlementRecorder recorder;
  private final WavePublish waves; // at least once; null when exactly-once
  private final TransactionalPublish transactions; // exactly-once; null when at least once
  private final LedgerRecovery recovery; // exactly-once; null when at least once

  /**
   * When the lane last made progress (a claim answered, a batch settled), {@link System#nanoTime}.
   */
  private volatile long progressNanos = System.nanoTime();

  /** The step of a lane waiting for the sink's verdicts. */
  static final String PUBLISHING = "publishing";

  /** Where the lane was last seen, for the stall report. */
  private volatile String step = "starting";

  // Touched by the lane's thread only.
  private Claim ahead; // claimed ahead of the batch being published; publishable next
  private Unsettled unsettled; // published, settlement not yet written
  // Exactly-once: a transaction of this lane may be committed but not settled (its outcome was
  // unknown, or its settlement failed); the ledger is read before anything is claimed again.
  private boolean recoverFirst;

  /**
   * A batch whose verdicts are all in and whose settlement is still to be written; {@code
   * position}, exactly-once, where its last transaction's ledger record is (or {@code null}).
   */
  private record Unsettled(
      Claim claim,
      SettlementPlanner.Plan plan,
      long ackedAtMillis,
      long publishNanos,
      LedgerPosition position) {}

  Lane(int index, LaneHost pipeline, LaneContext c) {
    this.index = index;
    this.pipeline = pipeline;
    this.source = c.source();
    this.router = c.router();
    this.planner = c.planner();
    this.gate = c.gate();
    this.errorBackoff = c.errorBackoff();
    this.stats = c.stats();
    this.batchSize = c.batchSize();
    this.wait = new SinkWait(pipeline);
    this.recorder =
        new SettlementRecorder(pipeline, c.sink(), c.deadLetterRouter(), stats, gate, wait);
    this.transactions =
        c.transactional() == null
            ? null
            : new TransactionalPublish(c.transactional(), index, stats);
    this.waves = transactions == null ? new WavePublish(c.sink(), stats, wait) : null;
    this.recovery = c.recovery();
  }

  @Override
  public void run() {
    try {
      loop();
    } catch (Error e) {
      pipeline.fatal("lane " + index, e);
    } finally {
      try {
        finishLeftovers();
      } catch (Error e) {
        pipeline.fatal("lane " + index, e);
      }
    }
  }

  /** Nanoseconds since the lane last made progress, as of {@code now}. */
  long stalledFor(long now) {
    return now - progressNanos;
  }

  /** What the lane was doing when last seen. */
  String step() {
    return step;
  }

  private void progressed() {
    progressNanos = System.nanoTime();
  }

  private void loop() {
    int failures = 0;
    while (pipeline.keepClaiming()) {
      try {
        Claim claim = ahead;
        ahead = null;
        if (claim == null) {
          settleUnsettled(); // nothing to overlap it with
          step = "waiting for the sink to become available";
          if (!gate.awaitOpen(CLAIM_WAIT)) {
            continue;
          }
          if (recoverFirst && !recoverInDoubt()) {
            continue;
          }
          step = "claiming";
          long claimStarted = System.nanoTime();
          claim = source.claim(index, batchSize, CLAIM_WAIT);
          logClaimed(claim, "", claimStarted);
          recordClaimed(claim);
          pipeline.sourceAnswered(true);
          progressed();
          if (claim.events().isEmpty()) {
            claim.release();
            failures = 0;
            continue;
          }
        }
        stats.batchSize.record(claim.events().size());
        process(claim);
        failures = 0;
      } catch (LeadershipLostException e) {
        pipeline.leadershipLost(e.getMessage());
        return;
      } catch (LedgerException e) {
        pipeline.fatal("lane " + index + " (the ledger)", e);
        return;
      } catch (SourceException e) {
        pipeline.sourceAnswered(false);
        failures++;
        Duration pause = errorBackoff.delayAfter(failures);
        log.warn(
            "pipeline {} lane {}: database error, retrying in {} ms: {}",
            pipeline.name(),
            index,
            pause.toMillis(),
            oneLine(e));
        if (!pipeline.sleepUnlessStopping(pause)) {
          return;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        failures++;
        log.error("pipeline {} lane {}: unexpected failure", pipeline.name(), index, e);
        if (!pipeline.sleepUnlessStopping(errorBackoff.delayAfter(failures))) {
          return;
        }
      }
    }
  }

  /**
   * Publishes the claim; its settlement is written before this returns, unless a batch claimed
   * ahead is left in {@link #ahead}: then it is left in {@link #unsettled}, to be written while
   * that batch is being published. Whatever happens, the claim and any batch claimed ahead end.
   */
  private void process(Claim claim) throws InterruptedException {
    boolean handedOver = false;
    try {
      long started = System.nanoTime();
      List<OutboxEvent> events = claim.events();
      Verdict[] verdicts = new Verdict[events.size()];
      String[] destinations = new String[events.size()];
      for (int i = 0; i < events.size(); i++) {
        if (events.get(i).defect() != null) { // a row the source could not read: never published
          verdicts[i] = Verdict.permanent(events.get(i).defect());
          stats.failed(verdicts[i]);
          continue;
        }
        destinations[i] = router.route(events.get(i));
        if (destinations[i] == null) {
          verdicts[i] =
              Verdict.permanent("no destination: " + router + " resolved to a blank name");
          stats.failed(verdicts[i]);
        }
      }
      LedgerPosition committed = null;
      if (transactions != null) {
        checkOwned(claim);
        step = PUBLISHING;
        TransactionalPublish.Result r =
            transactions.publish(claim.identity(), events, destinations, verdicts, driver(claim));
        switch (r.ending()) {
          case DONE -> committed = r.committed();
          case ABANDONED -> {
            recoverFirst = true; // a transaction may have been committed meanwhile
            log.warn(
                "pipeline {} lane {}: a transaction of {} events was abandoned before its outcome"
                    + " ({}); they are released, and the ledger is read before anything is claimed"
                    + " again",
                pipeline.name(),
                index,
                events.size(),
                pipeline.abandonInFlight() ? "stopping" : "the claim is no longer owned");
            stats.released.increment(events.size());
            return; // released unsettled, with the batch claimed ahead (finally)
          }
          case FENCED ->
              throw new LeadershipLostException(
                  "pipeline "
                      + pipeline.name()
                      + " lane "
                      + index
                      + ": fenced by another instance, the batch is released unsettled: "
                      + r.error());
          case IN_DOUBT -> {
            recoverFirst = true;
            log.warn(
                "pipeline {} lane {}: the outcome of a transaction is unknown, the ledger will tell"
                    + " before anything is claimed again: {}",
                pipeline.name(),
                index,
                r.error());
            return; // the claim is released unsettled (finally)
          }
        }
      } else {
        if (!waves.publish(claim, events, destinations, verdicts, waveDriver(claim))) {
          stats.released.increment(events.size());
          return; // abandoned: released unsettled, with the batch claimed ahead (finally)
        }
      }
      settleUnsettled(); // when no wave was published
      long published = System.nanoTime();
      stats.publishStage.record(published - started, NANOSECONDS);
      Unsettled done =
          new Unsettled(
              claim,
              planner.plan(events, Arrays.asList(verdicts)),
              pipeline.clock().millis(),
              published - started,
              committed);
      handedOver = true;
      if (ahead != null && !(allFinal(done.plan()) && pipeline.keepClaiming())) {
        releaseAhead();
      }
      if (ahead != null) {
        unsettled = done;
      } else {
        settle(done);
      }
    } finally {
      if (!handedOver) {
        // A batch that ends unsettled (abandoned, in doubt, failed) releases the batch claimed
        // ahead too: that one may hold later events of its keys, and goes out only after every
        // event of this one was published or dead-lettered (Source#claimAhead); exactly-once, the
        // ledger is read first, since an abandoned transaction may still commit.
        releaseQuietly(claim);
        releaseAhead();
      }
    }
  }

  /** Checked right before the sink (see {@link Claim#owned}). */
  private void checkOwned(Claim claim) {
    if (!claim.owned()) {
      // A process that was frozen wakes up to a lost lease and must not publish what another
      // instance may have published since.
      throw new LeadershipLostException(
          "pipeline "
              + pipeline.name()
              + " lane "
              + index
              + ": the active role was lost before publishing (lease ran out, or another"
              + " instance took over); the batch is released unpublished");
    }
  }

  /**
   * Exactly-once: settles from the ledger what this lane may have committed without settling,
   * before anything is claimed again. The broker being unreachable meanwhile is an outage like any
   * other (the gate closes and probes), not a failure of the lane.
   *
   * @return whether the ledger was read; {@code false} when the broker could not be reached
   */
  private boolean recoverInDoubt() {
    step = "settling in-doubt batches from the ledger";
    try {
      recovery.recover(Set.of(index), false);
    } catch (LedgerException | SourceException e) {
      throw e;
    } catch (RuntimeException e) {
      // The SPI's word for "the broker cannot be reached" (TransactionalSink#readLedger, #fence).
      if (gate.reportUnavailable(
          "the ledger cannot be read to settle an in-doubt transaction: " + oneLine(e))) {
        stats.outages.increment();
      }
      return false;
    }
    recoverFirst = false;
    return true;
  }

  /** What {@link WavePublish} needs from the lane for {@code claim}. */
  private WavePublish.Driver waveDriver(Claim claim) {
    return new WavePublish.Driver() {
      @Override
      public void publishing() {
        checkOwned(claim);
        step = PUBLISHING;
      }

      @Override
      public void started() throws InterruptedException {
        overlap(claim);
      }
    };
  }

  /** What {@link TransactionalPublish} needs from the lane for {@code claim}. */
  private TransactionalPublish.Driver driver(Claim claim) {
    return new TransactionalPublish.Driver() {
      @Override
      public void started() throws InterruptedException {
        overlap(claim);
      }

      @Override
      public SinkTransaction await(CompletableFuture<SinkTransaction> transaction)
          throws InterruptedException {
        try {
          return wait.await(transaction, claim);
        } catch (ExecutionException e) {
          // The SPI forbids it; whether it committed is unknown.
          return new SinkTransaction.Failed(
              "sink failed the transaction: " + oneLine(e.getCause()), true);
        }
      }

      @Override
      public Settlement planned(OutboxEvent event, Verdict verdict) {
        return planner.plan(List.of(event), List.of(verdict)).settlements().get(0);
      }

      @Override
      public RoutedEvent copyOf(Settlement.DeadLetter deadLetter) {
        return recorder.deadLetterCopy(deadLetter);
      }
    };
  }

  /**
   * Runs while the claim's first publish is on its way: writes the previous batch's settlement and
   * claims the lane's next batch ahead.
   */
  private void overlap(Claim claim) throws InterruptedException {
    settleUnsettled();
    // A batch short of batch-size took every row the lane had: claiming ahead would mostly find
    // the few rows committed since, at the cost of one more transaction per batch. Measured at
    // 1,000 events/s (docs/performance.md): less relay CPU and a lower p99 without it.
    if (!pipeline.keepClaiming() || claim.events().size() < batchSize) {
      return;
    }
    try {
      long claimStarted = System.nanoTime();
      Claim next = source.claimAhead(index, batchSize, claim);
      if (next.events().isEmpty()) {
        next.release();
        return;
      }
      ahead = next;
      logClaimed(next, " ahead", claimStarted);
      recordClaimed(next);
    } catch (SourceException e) {
      // Not fatal here: the lane's next claim meets the failure (or the lost leadership) again.
      log.debug(
          "pipeline {} lane {}: claiming ahead failed: {}", pipeline.name(), index, oneLine(e));
    }
  }

  /** The wake and claim stages of a claim (nothing for an empty one). */
  private void recordClaimed(Claim claim) {
    List<OutboxEvent> events = claim.events();
    if (events.isEmpty()) {
      return;
    }
    long now = pipeline.clock().millis();
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
          pipeline.name(),
          index,
          claim.events().size(),
          how,
          (System.nanoTime() - startedNanos) / 1_000_000);
    }
  }

  /** Whether every event of the plan was published or dead-lettered: nothing holds its key. */
  private static boolean allFinal(SettlementPlanner.Plan plan) {
    for (Settlement s : plan.settlements()) {
      if (!(s instanceof Settlement.Published) && !(s instanceof Settlement.DeadLetter)) {
        return false;
      }
    }
    return plan.outOfOrder().isEmpty();
  }

  private void settleUnsettled() throws InterruptedException {
    Unsettled u = unsettled;
    if (u != null) {
      unsettled = null;
      settle(u);
    }
  }

  /** Writes the batch's settlement; the claim ends whatever happens. */
  private void settle(Unsettled u) throws InterruptedException {
    step = "settling";
    long started = System.nanoTime();
    InterruptedException interrupted = null;
    try {
      if (transactions == null) { // exactly-once: the copies were part of the transaction
        recorder.publishDeadLetters(u.plan().settlements(), u.claim());
      }
    } catch (InterruptedException e) {
      interrupted = e; // the copies are best effort; the table's record is not
    }
    long writing = System.nanoTime();
    Settled settled;
    try {
      settled =
          u.position() == null
              ? u.claim().settle(u.plan().settlements())
              : u.claim().settle(u.plan().settlements(), u.position());
    } catch (RuntimeException e) {
      if (u.position() != null) {
        recoverFirst = true; // committed in Kafka, not settled: the ledger has it
      }
      throw e;
    }
    stats.settleStage.record(System.nanoTime() - writing, NANOSECONDS);
    progressed();
    recorder.record(u.plan(), settled, u.ackedAtMillis());
    if (interrupted != null) {
      throw interrupted;
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "pipeline {} lane {}: {} events published in {} ms, settled in {} ms",
          pipeline.name(),
          index,
          u.claim().events().size(),
          u.publishNanos() / 1_000_000,
          (System.nanoTime() - started) / 1_000_000);
    }
  }

  private void releaseAhead() {
    Claim a = ahead;
    ahead = null;
    if (a != null) {
      releaseQuietly(a);
    }
  }

  private void releaseQuietly(Claim claim) {
    try {
      claim.release();
    } catch (RuntimeException e) {
      log.debug("pipeline {} lane {}: release failed: {}", pipeline.name(), index, oneLine(e));
    }
  }

  /**
   * When the lane ends: a published batch still gets its settlement written (its events were
   * acknowledged), a batch claimed ahead is released.
   */
  private void finishLeftovers() {
    releaseAhead();
    Unsettled u = unsettled;
    unsettled = null;
    if (u != null) {
      try {
        settle(u);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        log.warn(
            "pipeline {} lane {}: recording {} published events failed, they will be claimed"
                + " again: {}",
            pipeline.name(),
            index,
            u.claim().events().size(),
            oneLine(e));
      }
    }
  }

  static String oneLine(Throwable t) {
    String m = t.getMessage();
    String text = t.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    return text.replaceAll("[\\r\\n]+", " ");
  }
}
