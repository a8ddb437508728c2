package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.SinkTransaction;
import io.outbox.relay.spi.Verdict;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes one claimed batch of a lane: routes its events (a row the source could not read, or one
 * without a destination, gets a permanent verdict unpublished), then hands the rest to {@link
 * WavePublish} (at least once) or {@link TransactionalPublish} (exactly-once), checking right
 * before the sink that the claim is still owned. It holds no state between batches.
 */
final class LanePublisher {
  // The lane's logger: these lines were the lane's and operators' log settings name it.
  private static final Logger log = LoggerFactory.getLogger(Lane.class);

  /** What the lane does once the batch's first publish is on its way. */
  @FunctionalInterface
  interface Overlap {
    void started() throws InterruptedException;
  }

  /**
   * How publishing a batch ended.
   *
   * @param verdicts one per event, or {@code null} when the batch ends unsettled: it is released
   *     (and with it the batch claimed ahead)
   * @param committed exactly-once: the ledger position of the batch's last committed transaction,
   *     or {@code null}
   * @param inDoubt exactly-once: a transaction of the batch may have been committed, so the ledger
   *     is read before the lane claims again
   */
  record Outcome(Verdict[] verdicts, LedgerPosition committed, boolean inDoubt) {
    static Outcome unsettled(boolean inDoubt) {
      return new Outcome(null, null, inDoubt);
    }
  }

  private final String pipeline;
  private final int index;
  private final LaneHost host;
  private final Router router;
  private final SettlementPlanner planner;
  private final PipelineStats stats;
  private final LaneProgress progress;
  private final SinkWait wait;
  private final SettlementRecorder recorder;
  private final WavePublish waves; // at least once; null when exactly-once
  private final TransactionalPublish transactions; // exactly-once; null when at least once

  LanePublisher(
      int index,
      LaneHost host,
      LaneContext c,
      LaneProgress progress,
      SinkWait wait,
      SettlementRecorder recorder) {
    this.pipeline = c.pipeline();
    this.index = index;
    this.host = host;
    this.router = c.router();
    this.planner = c.planner();
    this.stats = c.stats();
    this.progress = progress;
    this.wait = wait;
    this.recorder = recorder;
    this.transactions =
        c.transactional() == null
            ? null
            : new TransactionalPublish(c.transactional(), index, stats, c.form(), c.tracing());
    this.waves =
        transactions == null ? new WavePublish(c.sink(), stats, wait, c.form(), c.tracing()) : null;
  }

  /**
   * Publishes the claim's events and collects their verdicts; {@code overlap} runs once the first
   * publish is on its way.
   *
   * @throws LeadershipLostException when the claim is no longer owned, or another instance fenced
   *     this one
   */
  Outcome publish(Claim claim, Overlap overlap) throws InterruptedException {
    List<OutboxEvent> events = claim.events();
    Verdict[] verdicts = new Verdict[events.size()];
    String[] destinations = route(events, verdicts);
    if (transactions != null) {
      return publishTransactionally(claim, events, destinations, verdicts, overlap);
    }
    if (!waves.publish(claim, events, destinations, verdicts, waveDriver(claim, overlap))) {
      stats.released.increment(events.size());
      return Outcome.unsettled(false); // abandoned: released unsettled
    }
    return new Outcome(verdicts, null, false);
  }

  /** Each event's destination; an event that cannot be published gets its verdict instead. */
  private String[] route(List<OutboxEvent> events, Verdict[] verdicts) {
    String[] destinations = new String[events.size()];
    for (int i = 0; i < events.size(); i++) {
      if (events.get(i).defect() != null) { // a row the source could not read: never published
        verdicts[i] = Verdict.permanent(events.get(i).defect());
        stats.failed(verdicts[i]);
        continue;
      }
      destinations[i] = router.route(events.get(i));
      if (destinations[i] == null) {
        verdicts[i] = Verdict.permanent("no destination: " + router + " resolved to a blank name");
        stats.failed(verdicts[i]);
      }
    }
    return destinations;
  }

  private Outcome publishTransactionally(
      Claim claim,
      List<OutboxEvent> events,
      String[] destinations,
      Verdict[] verdicts,
      Overlap overlap)
      throws InterruptedException {
    checkOwned(claim);
    progress.at(LaneProgress.PUBLISHING);
    TransactionalPublish.Result r =
        transactions.publish(
            claim.identity(), events, destinations, verdicts, driver(claim, overlap));
    return switch (r.ending()) {
      case DONE -> new Outcome(verdicts, r.committed(), false);
      case ABANDONED -> {
        // A transaction may have been committed meanwhile.
        log.warn(
            "pipeline {} lane {}: a transaction of {} events was abandoned before its outcome"
                + " ({}); they are released, and the ledger is read before anything is claimed"
                + " again",
            pipeline,
            index,
            events.size(),
            host.abandonInFlight() ? "stopping" : "the claim is no longer owned");
        stats.released.increment(events.size());
        yield Outcome.unsettled(true);
      }
      case FENCED ->
          throw new LeadershipLostException(
              "pipeline "
                  + pipeline
                  + " lane "
                  + index
                  + ": fenced by another instance, the batch is released unsettled: "
                  + r.error());
      case IN_DOUBT -> {
        log.warn(
            "pipeline {} lane {}: the outcome of a transaction is unknown, the ledger will tell"
                + " before anything is claimed again: {}",
            pipeline,
            index,
            r.error());
        yield Outcome.unsettled(true);
      }
    };
  }

  /** Checked right before the sink (see {@link Claim#owned}). */
  private void checkOwned(Claim claim) {
    if (!claim.owned()) {
      // A process that was frozen wakes up to a lost lease and must not publish what another
      // instance may have published since.
      throw new LeadershipLostException(
          "pipeline "
              + pipeline
              + " lane "
              + index
              + ": the active role was lost before publishing (lease ran out, or another"
              + " instance took over); the batch is released unpublished");
    }
  }

  /** What {@link WavePublish} needs from the lane for {@code claim}. */
  private WavePublish.Driver waveDriver(Claim claim, Overlap overlap) {
    return new WavePublish.Driver() {
      @Override
      public void publishing() {
        checkOwned(claim);
        progress.at(LaneProgress.PUBLISHING);
      }

      @Override
      public void started() throws InterruptedException {
        overlap.started();
      }
    };
  }

  /** What {@link TransactionalPublish} needs from the lane for {@code claim}. */
  private TransactionalPublish.Driver driver(Claim claim, Overlap overlap) {
    return new TransactionalPublish.Driver() {
      @Override
      public void started() throws InterruptedException {
        overlap.started();
      }

      @Override
      public SinkTransaction await(CompletableFuture<SinkTransaction> transaction)
          throws InterruptedException {
        try {
          return wait.await(transaction, claim);
        } catch (ExecutionException e) {
          // The SPI forbids it; whether it committed is unknown.
          return new SinkTransaction.Failed(
              "sink failed the transaction: " + Lane.oneLine(e.getCause()), true);
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
}
