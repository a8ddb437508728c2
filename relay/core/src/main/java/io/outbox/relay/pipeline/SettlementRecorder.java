package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.support.RelayHeaders;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What follows a batch's settlement besides the table: the copies of its dead letters for {@code
 * dead-letter.destination} (at least once; exactly-once puts them in the transaction), and its
 * record in the metrics and the log, where an outage also closes the sink gate.
 */
final class SettlementRecorder {
  // The lane's logger: these lines were the lane's and operators' log settings name it.
  private static final Logger log = LoggerFactory.getLogger(Lane.class);

  private final String pipeline;
  private final Sink sink;
  private final Router deadLetterRouter;
  private final PipelineStats stats;
  private final SinkGate gate;
  private final SinkWait wait;
  private final MessageForm form;
  private final EventTracing tracing;

  SettlementRecorder(
      String pipeline,
      Sink sink,
      Router deadLetterRouter,
      PipelineStats stats,
      SinkGate gate,
      SinkWait wait,
      MessageForm form,
      EventTracing tracing) {
    this.pipeline = pipeline;
    this.form = form;
    this.sink = sink;
    this.deadLetterRouter = deadLetterRouter;
    this.stats = stats;
    this.gate = gate;
    this.wait = wait;
    this.tracing = tracing;
  }

  /**
   * Also publishes dead letters to {@code dead-letter.destination}; the table stays the truth. Not
   * once the claim is no longer owned: the instance that took over judges these events again.
   */
  void publishDeadLetters(List<Settlement> settlements, Claim claim) throws InterruptedException {
    if (deadLetterRouter == null || !claim.owned()) {
      return;
    }
    List<RoutedEvent> copies = new ArrayList<>();
    for (Settlement s : settlements) {
      if (s instanceof Settlement.DeadLetter dl) {
        RoutedEvent copy = deadLetterCopy(dl);
        if (copy != null) {
          copies.add(copy);
        }
      }
    }
    if (copies.isEmpty()) {
      return;
    }
    // A copy is a publish of its own: its span is a child of the row's trace context too.
    EventTracing.Wave traced = tracing.publishing(copies);
    List<Verdict> verdicts =
        traced.ended(
            wait.verdicts(
                sink.publish(traced.routed()).toCompletableFuture(), copies.size(), claim));
    for (int i = 0; verdicts != null && i < verdicts.size(); i++) {
      if (!verdicts.get(i).isPublished()) {
        log.warn(
            "pipeline {}: dead letter {} not copied to {}: {}",
            pipeline,
            copies.get(i).event().eventId(),
            copies.get(i).destination(),
            verdicts.get(i).error());
      }
    }
  }

  /** The copy of a dead letter for {@code dead-letter.destination}; {@code null} when none. */
  RoutedEvent deadLetterCopy(Settlement.DeadLetter dl) {
    String destination = deadLetterRouter == null ? null : deadLetterRouter.render(dl.event());
    if (destination == null) {
      return null;
    }
    return form.routed(dl.event(), destination, RelayHeaders.deadLetter(dl));
  }

  void record(SettlementPlanner.Plan plan, Settled settled, long ackedAtMillis) {
    int published = 0;
    int released = 0;
    Set<Long> kept = new HashSet<>();
    for (Settlement.Retry r : settled.deadLettersKept()) {
      kept.add(r.event().id());
      stats.deadLetterMoveFailures.increment();
      log.warn(
          "pipeline {}: event {} could not be moved to the dead-letter table, kept in the outbox"
              + " as a retry in {} ms: {}",
          pipeline,
          r.event().eventId(),
          r.delay().toMillis(),
          r.error());
    }
    for (Settlement s : plan.settlements()) {
      if (kept.contains(s.event().id())) {
        continue;
      }
      if (s instanceof Settlement.Published) {
        published++;
        long latency = ackedAtMillis - s.event().createdAt().toEpochMilli();
        stats.commitToAck.record(Math.max(0, latency), TimeUnit.MILLISECONDS);
      } else if (s instanceof Settlement.Retry r) {
        stats.retried.increment();
        log.info(
            "pipeline {}: event {} failed (attempt {}), retry in {} ms: {}",
            pipeline,
            r.event().eventId(),
            r.attempts(),
            r.delay().toMillis(),
            r.error());
      } else if (s instanceof Settlement.DeadLetter d) {
        stats.deadLettered(d.reason());
        log.warn(
            "pipeline {}: event {} dead-lettered ({}, {} attempts): {}",
            pipeline,
            d.event().eventId(),
            d.reason().columnValue(),
            d.attempts(),
            d.error());
      } else {
        released++;
      }
    }
    stats.published.increment(published);
    stats.released.increment(released);
    for (OutboxEvent e : plan.outOfOrder()) {
      log.warn(
          "pipeline {}: event {} was acknowledged although an earlier event of its key failed"
              + " in the same batch",
          pipeline,
          e.eventId());
    }
    if (plan.sinkUnavailable() && gate.reportUnavailable(plan.unavailableError())) {
      stats.outages.increment();
    }
  }
}
