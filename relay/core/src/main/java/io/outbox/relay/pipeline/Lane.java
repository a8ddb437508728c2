package io.outbox.relay.pipeline;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One lane of a pipeline: claims a batch of its keys, publishes it, waits for every verdict and
 * settles it, then the next. At most one batch per lane is in flight, so a key's events never
 * overtake each other; lanes run in parallel.
 */
final class Lane implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(Lane.class);
  private static final Duration CLAIM_WAIT = Duration.ofMillis(500);

  private final int index;
  private final Pipeline pipeline;
  private final Source source;
  private final Sink sink;
  private final Router router;
  private final SettlementPlanner planner;
  private final SinkGate gate;
  private final RetryPolicy errorBackoff;
  private final PipelineStats stats;
  private final int batchSize;
  private final Router deadLetterRouter;

  Lane(
      int index,
      Pipeline pipeline,
      Source source,
      Sink sink,
      Router router,
      SettlementPlanner planner,
      SinkGate gate,
      RetryPolicy errorBackoff,
      PipelineStats stats,
      int batchSize,
      Router deadLetterRouter) {
    this.index = index;
    this.pipeline = pipeline;
    this.source = source;
    this.sink = sink;
    this.router = router;
    this.planner = planner;
    this.gate = gate;
    this.errorBackoff = errorBackoff;
    this.stats = stats;
    this.batchSize = batchSize;
    this.deadLetterRouter = deadLetterRouter;
  }

  @Override
  public void run() {
    int failures = 0;
    while (pipeline.keepClaiming()) {
      try {
        if (!gate.awaitOpen(CLAIM_WAIT)) {
          continue;
        }
        long claimStarted = System.nanoTime();
        Claim claim = source.claim(index, batchSize, CLAIM_WAIT);
        if (log.isDebugEnabled() && !claim.events().isEmpty()) {
          log.debug(
              "pipeline {} lane {}: claimed {} events in {} ms",
              pipeline.name(),
              index,
              claim.events().size(),
              (System.nanoTime() - claimStarted) / 1_000_000);
        }
        pipeline.sourceAnswered();
        if (claim.events().isEmpty()) {
          claim.release();
        } else {
          stats.batchSize.record(claim.events().size());
          process(claim);
        }
        failures = 0;
      } catch (LeadershipLostException e) {
        pipeline.leadershipLost(e.getMessage());
        return;
      } catch (SourceException e) {
        pipeline.sourceFailed();
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

  private void process(Claim claim) throws InterruptedException {
    long started = System.nanoTime();
    List<OutboxEvent> events = claim.events();
    Verdict[] verdicts = new Verdict[events.size()];
    String[] destinations = new String[events.size()];
    for (int i = 0; i < events.size(); i++) {
      destinations[i] = router.route(events.get(i));
      if (destinations[i] == null) {
        verdicts[i] = Verdict.permanent("no destination: " + router + " resolved to a blank name");
        stats.failed(verdicts[i]);
      }
    }
    Set<AggregateKey> held = new HashSet<>();
    for (List<Integer> wave : Waves.of(events, destinations)) {
      List<RoutedEvent> routed = new ArrayList<>(wave.size());
      List<Integer> positions = new ArrayList<>(wave.size());
      for (int i : wave) {
        if (verdicts[i] != null) {
          continue;
        }
        if (held.contains(events.get(i).key())) {
          // An earlier event of the key failed: this one waits (released, no attempt counted).
          verdicts[i] = Verdict.unavailable("held back behind a failed event of its key");
          continue;
        }
        routed.add(new RoutedEvent(events.get(i), destinations[i]));
        positions.add(i);
      }
      if (routed.isEmpty()) {
        continue;
      }
      stats.attempts.increment(routed.size());
      List<Verdict> answered = await(sink.publish(routed).toCompletableFuture(), routed.size());
      if (answered == null) {
        claim.release(); // abandoned at shutdown: the events will be claimed again
        stats.released.increment(events.size());
        return;
      }
      for (int j = 0; j < answered.size(); j++) {
        int i = positions.get(j);
        verdicts[i] = answered.get(j);
        stats.failed(verdicts[i]);
        Verdict.Outcome outcome = verdicts[i].outcome();
        if (outcome == Verdict.Outcome.RETRYABLE || outcome == Verdict.Outcome.SINK_UNAVAILABLE) {
          held.add(events.get(i).key());
        }
      }
    }
    long published = System.nanoTime();
    long ackedAtMillis = pipeline.clock().millis();
    SettlementPlanner.Plan plan = planner.plan(events, Arrays.asList(verdicts));
    publishDeadLetters(plan.settlements());
    claim.settle(plan.settlements());
    record(plan, ackedAtMillis);
    if (log.isDebugEnabled()) {
      log.debug(
          "pipeline {} lane {}: {} events published in {} ms, settled in {} ms",
          pipeline.name(),
          index,
          events.size(),
          (published - started) / 1_000_000,
          (System.nanoTime() - published) / 1_000_000);
    }
  }

  /** Waits for the sink's verdicts; {@code null} when the pipeline's stop deadline passed. */
  private List<Verdict> await(CompletableFuture<List<Verdict>> future, int size)
      throws InterruptedException {
    while (true) {
      try {
        return future.get(100, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        if (pipeline.abandonInFlight()) {
          return null;
        }
      } catch (ExecutionException e) {
        // The SPI forbids it; treat it as an outage rather than blame the events.
        String error = "sink failed the whole batch: " + oneLine(e.getCause());
        return java.util.Collections.nCopies(size, Verdict.unavailable(error));
      }
    }
  }

  /** Also publishes dead letters to {@code dead-letter.destination}; the table stays the truth. */
  private void publishDeadLetters(List<Settlement> settlements) throws InterruptedException {
    if (deadLetterRouter == null) {
      return;
    }
    List<RoutedEvent> copies = new ArrayList<>();
    for (Settlement s : settlements) {
      if (s instanceof Settlement.DeadLetter dl) {
        String destination = deadLetterRouter.render(dl.event());
        if (destination != null) {
          copies.add(
              new RoutedEvent(
                  dl.event(),
                  destination,
                  Map.of(
                      "dead-letter-reason", dl.reason().columnValue(),
                      "dead-letter-attempts", Integer.toString(dl.attempts()),
                      "dead-letter-error", dl.error())));
        }
      }
    }
    if (copies.isEmpty()) {
      return;
    }
    List<Verdict> verdicts = await(sink.publish(copies).toCompletableFuture(), copies.size());
    for (int i = 0; verdicts != null && i < verdicts.size(); i++) {
      if (!verdicts.get(i).isPublished()) {
        log.warn(
            "pipeline {}: dead letter {} not copied to {}: {}",
            pipeline.name(),
            copies.get(i).event().eventId(),
            copies.get(i).destination(),
            verdicts.get(i).error());
      }
    }
  }

  private void record(SettlementPlanner.Plan plan, long ackedAtMillis) {
    int published = 0;
    int released = 0;
    for (Settlement s : plan.settlements()) {
      if (s instanceof Settlement.Published) {
        published++;
        long latency = ackedAtMillis - s.event().createdAt().toEpochMilli();
        stats.commitToAck.record(Math.max(0, latency), TimeUnit.MILLISECONDS);
      } else if (s instanceof Settlement.Retry r) {
        stats.retried.increment();
        log.info(
            "pipeline {}: event {} failed (attempt {}), retry in {} ms: {}",
            pipeline.name(),
            r.event().eventId(),
            r.attempts(),
            r.delay().toMillis(),
            r.error());
      } else if (s instanceof Settlement.DeadLetter d) {
        stats.deadLettered(d.reason());
        log.warn(
            "pipeline {}: event {} dead-lettered ({}, {} attempts): {}",
            pipeline.name(),
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
          pipeline.name(),
          e.eventId());
    }
    if (plan.sinkUnavailable() && gate.reportUnavailable(plan.unavailableError())) {
      stats.outages.increment();
    }
  }

  static String oneLine(Throwable t) {
    String m = t.getMessage();
    String text = t.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    return text.replaceAll("[\\r\\n]+", " ");
  }
}
