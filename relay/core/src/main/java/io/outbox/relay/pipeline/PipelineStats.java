package io.outbox.relay.pipeline;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.outbox.relay.spi.Settlement.DeadLetterReason;
import io.outbox.relay.spi.Verdict;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

/**
 * What one pipeline did, as Micrometer meters tagged with the pipeline's name (names and meaning in
 * {@code docs/metrics.md}); cheap to update from every lane.
 */
public final class PipelineStats {
  private static final Duration[] LATENCY_BUCKETS = {
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10),
    Duration.ofSeconds(30),
    Duration.ofSeconds(60),
    Duration.ofSeconds(300)
  };
  private static final Duration[] STAGE_BUCKETS = {
    Duration.ofMillis(1),
    Duration.ofMillis(2),
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10),
    Duration.ofSeconds(30)
  };
  private static final double[] BATCH_BUCKETS = {1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000};

  final Counter published;
  final Counter attempts;
  final Counter retried;
  final Counter released;
  final Counter outages;
  final Counter deadLetterMoveFailures;
  final Counter unrecordedAfterLeaseLoss;
  private final Map<Verdict.Outcome, Counter> failures = new EnumMap<>(Verdict.Outcome.class);
  private final Map<DeadLetterReason, Counter> deadLettered = new EnumMap<>(DeadLetterReason.class);
  final Timer commitToAck;
  final DistributionSummary batchSize;

  /** Exactly-once: broker transactions committed, aborted (an event at fault), failed. */
  final Counter transactionsCommitted;

  final Counter transactionsAborted;
  final Counter transactionsFailed;

  /** Exactly-once: times this instance's transactional publisher was fenced by another. */
  final Counter fenced;

  /** Exactly-once: in-doubt batches (ledger records) and their events settled from the ledger. */
  final Counter ledgerBatchesSettled;

  final Counter ledgerEventsSettled;

  /** From the row's {@code created_at} to the claim that took it, per event. */
  final Timer wakeStage;

  /** The source's query of a claim that found events (no waiting), per batch. */
  final Timer claimStage;

  /** From handing a batch to the sink to its last verdict, per batch. */
  final Timer publishStage;

  /** Writing a batch's settlement, per batch. */
  final Timer settleStage;

  /**
   * @param pipeline the pipeline's name, the {@code pipeline} tag of every meter
   * @param registry where the meters are registered
   */
  public PipelineStats(String pipeline, MeterRegistry registry) {
    Tags tags = Tags.of("pipeline", pipeline);
    published =
        counter(registry, "outbox.relay.events.published", tags, "Events the broker acknowledged.");
    attempts =
        counter(
            registry,
            "outbox.relay.publish.attempts",
            tags,
            "Events handed to the sink, every send counted.");
    retried =
        counter(
            registry,
            "outbox.relay.events.retried",
            tags,
            "Failed attempts recorded with a retry scheduled.");
    released =
        counter(
            registry,
            "outbox.relay.events.released",
            tags,
            "Events released unjudged (outage, shutdown, held behind their key).");
    outages =
        counter(
            registry,
            "outbox.relay.sink.outages",
            tags,
            "Times the pipeline paused because its sink became unavailable.");
    deadLetterMoveFailures =
        counter(
            registry,
            "outbox.relay.dead.letter.move.failures",
            tags,
            "Dead letters the dead-letter table refused, kept in the outbox as retries.");
    unrecordedAfterLeaseLoss =
        counter(
            registry,
            "outbox.relay.events.unrecorded.after.lease.loss",
            tags,
            "Events handed to the sink that this instance could not record because it lost the"
                + " lease meanwhile: the active instance sends them again (possibly late).");
    String txHelp = "Broker transactions of an exactly-once pipeline, by outcome.";
    transactionsCommitted =
        counter(registry, "outbox.relay.transactions", tags.and("outcome", "committed"), txHelp);
    transactionsAborted =
        counter(registry, "outbox.relay.transactions", tags.and("outcome", "aborted"), txHelp);
    transactionsFailed =
        counter(registry, "outbox.relay.transactions", tags.and("outcome", "failed"), txHelp);
    fenced =
        counter(
            registry,
            "outbox.relay.transactions.fenced",
            tags,
            "Times another instance fenced this instance's transactional publisher.");
    ledgerBatchesSettled =
        counter(
            registry,
            "outbox.relay.ledger.settled.batches",
            tags,
            "In-doubt batches (committed, not settled) settled from the ledger without re-sending.");
    ledgerEventsSettled =
        counter(
            registry,
            "outbox.relay.ledger.settled.events",
            tags,
            "Rows settled from the ledger (published before, settlement lost).");
    failure(registry, tags, Verdict.Outcome.SINK_UNAVAILABLE, "sink_unavailable");
    failure(registry, tags, Verdict.Outcome.RETRYABLE, "retryable");
    failure(registry, tags, Verdict.Outcome.PERMANENT, "permanent");
    for (DeadLetterReason reason : DeadLetterReason.values()) {
      deadLettered.put(
          reason,
          counter(
              registry,
              "outbox.relay.events.dead.lettered",
              tags.and("reason", reason.columnValue()),
              "Events moved to the dead-letter table."));
    }
    commitToAck =
        Timer.builder("outbox.relay.commit.to.ack")
            .description("From the row's created_at to the broker's acknowledgement.")
            .tags(tags)
            .serviceLevelObjectives(LATENCY_BUCKETS)
            .register(registry);
    wakeStage =
        stage(registry, tags, "wake", "From the row's created_at to the claim that took it.");
    claimStage = stage(registry, tags, "claim", "The claim query of a batch, without waiting.");
    publishStage = stage(registry, tags, "publish", "From the send to the broker's last verdict.");
    settleStage = stage(registry, tags, "settle", "Writing the batch's settlement.");
    batchSize =
        DistributionSummary.builder("outbox.relay.batch.size")
            .baseUnit("events")
            .description("Events per claimed batch.")
            .tags(tags)
            .serviceLevelObjectives(BATCH_BUCKETS)
            .register(registry);
  }

  private static Timer stage(MeterRegistry registry, Tags tags, String stage, String help) {
    return Timer.builder("outbox.relay.stage")
        .description("Where an event's time goes, by stage: " + help)
        .tags(tags.and("stage", stage))
        .serviceLevelObjectives(STAGE_BUCKETS)
        .register(registry);
  }

  private static Counter counter(MeterRegistry registry, String name, Tags tags, String help) {
    return Counter.builder(name).description(help).tags(tags).register(registry);
  }

  private void failure(MeterRegistry registry, Tags tags, Verdict.Outcome outcome, String label) {
    failures.put(
        outcome,
        counter(
            registry,
            "outbox.relay.publish.failures",
            tags.and("class", label),
            "Events the sink answered with a failure, by failure class."));
  }

  /** Counts a failed verdict under its class; a published one counts nothing here. */
  void failed(Verdict verdict) {
    Counter c = failures.get(verdict.outcome());
    if (c != null) {
      c.increment();
    }
  }

  void deadLettered(DeadLetterReason reason) {
    deadLettered.get(reason).increment();
  }

  public long published() {
    return (long) published.count();
  }

  public long retried() {
    return (long) retried.count();
  }

  public long deadLettered() {
    long sum = 0;
    for (Counter c : deadLettered.values()) {
      sum += (long) c.count();
    }
    return sum;
  }

  /** Dead letters the dead-letter table refused (kept in the outbox as retries). */
  public long deadLetterMoveFailures() {
    return (long) deadLetterMoveFailures.count();
  }

  public long released() {
    return (long) released.count();
  }

  /** Batches claimed (and judged or released). */
  public long batches() {
    return batchSize.count();
  }

  /** How many times the sink was found unavailable (outages that paused the pipeline). */
  public long sinkUnavailable() {
    return (long) outages.count();
  }

  /**
   * Events handed to the sink that this instance could not record because it lost the lease
   * meanwhile (the active instance sends them again).
   */
  public long unrecordedAfterLeaseLoss() {
    return (long) unrecordedAfterLeaseLoss.count();
  }

  /** Events handed to the sink. */
  public long attempts() {
    return (long) attempts.count();
  }

  /** Events answered with {@code outcome} (a failure class). */
  public long failures(Verdict.Outcome outcome) {
    Counter c = failures.get(outcome);
    return c == null ? 0 : (long) c.count();
  }

  @Override
  public String toString() {
    return "published="
        + published()
        + " retried="
        + retried()
        + " dead-lettered="
        + deadLettered()
        + " released="
        + released()
        + " batches="
        + batches();
  }
}
