package io.outbox.relay.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.typesafe.config.ConfigFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.config.PipelineSettings.Backoff;
import io.outbox.relay.config.PipelineSettings.CloudEventsMode;
import io.outbox.relay.config.PipelineSettings.CloudEventsSettings;
import io.outbox.relay.config.PipelineSettings.RetrySettings;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

class PipelineTest {
  private Pipeline pipeline;

  @AfterEach
  void stop() {
    if (pipeline != null) {
      pipeline.stop(Duration.ofSeconds(5));
    }
  }

  /** A pipeline on the system's time, whose meters go nowhere. */
  private static Pipeline newPipeline(PipelineSettings settings, Source source, Sink sink) {
    return new Pipeline(
        settings, source, sink, new SimpleMeterRegistry(), Clock.systemUTC(), Ticker.SYSTEM);
  }

  private static PipelineSettings settings(int maxAttempts, String deadLetterDestination) {
    return settings(maxAttempts, deadLetterDestination, Duration.ofSeconds(30));
  }

  private static PipelineSettings settings(
      int maxAttempts, String deadLetterDestination, Duration stallTimeout) {
    return settings(maxAttempts, deadLetterDestination, stallTimeout, CloudEventsSettings.NONE);
  }

  private static PipelineSettings settings(
      int maxAttempts,
      String deadLetterDestination,
      Duration stallTimeout,
      CloudEventsSettings cloudEvents) {
    return settings(
        maxAttempts,
        deadLetterDestination,
        stallTimeout,
        cloudEvents,
        DatabaseSettings.OnPublish.MARK);
  }

  private static PipelineSettings settings(
      int maxAttempts,
      String deadLetterDestination,
      Duration stallTimeout,
      CloudEventsSettings cloudEvents,
      DatabaseSettings.OnPublish onPublish) {
    Backoff fast = new Backoff(Duration.ofMillis(20), Duration.ofMillis(100), 2.0, 0.0);
    return new PipelineSettings(
        "test",
        "outbox-relay.pipelines.test",
        new DatabaseSettings(
            "jdbc:postgresql://localhost/x",
            "u",
            null,
            Map.of(),
            "outbox",
            "outbox_dead_letter",
            onPublish,
            "test"),
        "fake",
        ConfigFactory.empty(),
        "fake",
        ConfigFactory.empty(),
        "outbox.${aggregate_type}",
        cloudEvents,
        new RetrySettings(maxAttempts, fast),
        fast,
        3,
        7,
        deadLetterDestination,
        stallTimeout);
  }

  /**
   * A watermark with nothing settled yet; {@code settles}: ledger records settle their events in
   * {@code source} (otherwise nothing).
   */
  private static io.outbox.relay.spi.LedgerWatermark watermarkSettlingInto(
      FakeSource source, boolean settles) {
    return new io.outbox.relay.spi.LedgerWatermark() {
      @Override
      public Map<Integer, Long> settled() {
        return Map.of();
      }

      @Override
      public int settleFromLedger(
          io.outbox.relay.spi.LedgerPosition position,
          List<io.outbox.relay.spi.LedgerRecord.Event> events) {
        return settles ? source.settleFromLedger(events) : 0;
      }
    };
  }

  private static List<OutboxEvent> events(int count, int keys) {
    List<OutboxEvent> events = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      events.add(Events.event(i, "k" + (i % keys)));
    }
    return events;
  }

  @Test
  void exactlyOnceNeedsASourceThatKeepsTheLedgerWatermark() {
    FakeSource source = new FakeSource(3, events(1, 1));
    ScriptedTransactionalSink sink = new ScriptedTransactionalSink(batch -> null);
    assertThatThrownBy(() -> newPipeline(settings(3, null), source, sink))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "exactly-once delivery needs a source that keeps the ledger watermark");
  }

  @Test
  void exactlyOnceRefusesSettlementByPosition() {
    FakeSource source = new FakeSource(3, events(1, 1));
    source.watermark = watermarkSettlingInto(source, false);
    ScriptedTransactionalSink sink = new ScriptedTransactionalSink(batch -> null);
    PipelineSettings byPosition =
        settings(
            3,
            null,
            Duration.ofSeconds(30),
            CloudEventsSettings.NONE,
            DatabaseSettings.OnPublish.POSITION);
    assertThatThrownBy(() -> newPipeline(byPosition, source, sink))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "on-publish = position does not keep exactly-once's ledger watermark: use"
                + " on-publish = mark or delete with exactly-once");
  }

  @Test
  void publishesEveryEventInKeyOrder() {
    FakeSource source = new FakeSource(3, events(500, 17));
    FakeSink sink = new FakeSink();
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(sink.published).hasSize(500);
    assertThat(sink.published).allMatch(e -> e.destination().equals("outbox.order"));
    assertKeyOrder(sink.published);
    // Batches were claimed ahead and published while the previous one was being settled.
    assertThat(source.claimedAhead.get()).isPositive();
  }

  @Test
  void cloudEventsBinaryModeAddsTheAttributesUnderTheSinksPrefixToEveryMessage() {
    FakeSource source = new FakeSource(3, events(20, 3));
    FakeSink sink = new FakeSink();
    sink.cloudEventsPrefix = "cloudEvents_";
    pipeline =
        newPipeline(
            settings(
                3,
                null,
                Duration.ofSeconds(30),
                new CloudEventsSettings(CloudEventsMode.BINARY, "/shop/${aggregate_type}")),
            source,
            sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(sink.published).hasSize(20);
    assertThat(sink.published)
        .allSatisfy(
            e -> {
              assertThat(e.extraHeaders())
                  .containsEntry("cloudEvents_id", e.event().eventId().toString())
                  .containsEntry("cloudEvents_type", e.event().eventType())
                  .containsEntry("cloudEvents_source", "/shop/" + e.event().aggregateType())
                  .containsEntry("cloudEvents_specversion", "1.0")
                  .containsEntry("cloudEvents_subject", e.event().aggregateId())
                  .containsKey("cloudEvents_time");
              assertThat(e.event().payloadFormat()).isEqualTo(PayloadFormat.JSON);
            });
  }

  @Test
  void cloudEventsStructuredModeSendsTheJsonEventFormatWithThePayloadAsData() {
    FakeSource source = new FakeSource(3, events(5, 2));
    FakeSink sink = new FakeSink();
    pipeline =
        newPipeline(
            settings(
                3,
                null,
                Duration.ofSeconds(30),
                new CloudEventsSettings(CloudEventsMode.STRUCTURED, "urn:shop")),
            source,
            sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(sink.published).hasSize(5);
    for (RoutedEvent e : sink.published) {
      assertThat(e.event().payloadFormat()).isEqualTo(PayloadFormat.CLOUDEVENTS_JSON);
      io.cloudevents.CloudEvent read =
          new io.cloudevents.jackson.JsonFormat().deserialize(e.event().payload());
      assertThat(read.getId()).isEqualTo(e.event().eventId().toString());
      assertThat(read.getSource()).hasToString("urn:shop");
      assertThat(read.getData()).isNotNull();
    }
  }

  @Test
  void keepsTryingToBecomeActiveAfterLosingTheLeadEvenWhenTheFirstTryFails() {
    AtomicInteger activations = new AtomicInteger();
    AtomicBoolean lost = new AtomicBoolean();
    Source source =
        new Source() {
          @Override
          public void activate() {
            if (activations.incrementAndGet() == 2) {
              throw new SourceException("the database did not answer");
            }
          }

          @Override
          public Claim claim(int lane, int maxEvents, Duration maxWait)
              throws InterruptedException {
            if (lost.compareAndSet(false, true)) {
              throw new LeadershipLostException("the leader lock is gone");
            }
            Thread.sleep(Math.min(20, maxWait.toMillis()));
            return Claim.empty();
          }

          @Override
          public void close(Duration timeout) {}
        };
    pipeline = newPipeline(settings(3, null), source, new FakeSink());
    pipeline.start();

    await().atMost(Duration.ofSeconds(5)).until(() -> activations.get() >= 3);
    assertThat(lost).isTrue();
  }

  @Test
  void thePipelinesThreadsLogWithThePipelineAndTheLaneInTheirContext() {
    Map<String, Map<String, String>> contexts = new ConcurrentHashMap<>();
    FakeSource source = new FakeSource(3, List.of());
    source.onCall =
        () ->
            contexts.put(
                Thread.currentThread().getName(),
                Optional.ofNullable(MDC.getCopyOfContextMap()).orElse(Map.of()));
    pipeline = newPipeline(settings(3, null), source, new FakeSink());
    pipeline.start();

    await().atMost(Duration.ofSeconds(5)).until(() -> contexts.size() == 4);
    assertThat(contexts)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "outbox-relay-test", Map.of("pipeline", "test"),
                "outbox-relay-test-lane-0", Map.of("pipeline", "test", "lane", "0"),
                "outbox-relay-test-lane-1", Map.of("pipeline", "test", "lane", "1"),
                "outbox-relay-test-lane-2", Map.of("pipeline", "test", "lane", "2")));

    // A thread the pipelines share (the backlog reader, the daemon's stop) has the pipeline's
    // context while it works for it, and its own again after.
    String shared = Thread.currentThread().getName();
    MDC.put("request", "r1");
    try {
      pipeline.refreshBacklog();
      assertThat(contexts.remove(shared)).isEqualTo(Map.of("request", "r1", "pipeline", "test"));
      pipeline.stop(Duration.ofSeconds(5));
      assertThat(contexts.get(shared)).isEqualTo(Map.of("request", "r1", "pipeline", "test"));
      assertThat(MDC.getCopyOfContextMap()).isEqualTo(Map.of("request", "r1"));
    } finally {
      MDC.clear();
    }
  }

  @Test
  void aSourceThatCannotClaimAheadIsServedOneBatchAtATime() {
    FakeSource source = new FakeSource(3, events(200, 7));
    source.claimsAhead = false;
    FakeSink sink = new FakeSink();
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(sink.published).hasSize(200);
    assertKeyOrder(sink.published);
    assertThat(source.claimedAhead.get()).isZero();
  }

  @Test
  void outageCountsNoAttemptsAndResumes() {
    FakeSource source = new FakeSource(3, events(200, 10));
    FakeSink sink = new FakeSink();
    sink.up = false;
    pipeline = newPipeline(settings(2, null), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(5)).until(() -> !pipeline.sinkAvailable());
    assertThat(source.settled).allMatch(s -> s instanceof Settlement.Release);
    sink.up = true;

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(pipeline.stats().deadLettered()).isZero();
    assertThat(pipeline.stats().retried()).isZero();
    assertThat(sink.published).hasSize(200);
    assertKeyOrder(sink.published);
  }

  @Test
  void poisonEventIsDeadLetteredAndOthersFlow() {
    FakeSource source = new FakeSource(3, events(100, 5));
    FakeSink sink = new FakeSink();
    sink.verdicts =
        e -> e.event().id() == 42 ? Verdict.permanent("record too large") : Verdict.published();
    pipeline = newPipeline(settings(3, "dead.letters"), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(source.settled)
        .filteredOn(s -> s instanceof Settlement.DeadLetter)
        .singleElement()
        .satisfies(s -> assertThat(s.event().id()).isEqualTo(42));
    assertThat(sink.published).hasSize(99);
  }

  @Test
  void aRowTheSourceCouldNotReadIsDeadLetteredWithoutBeingPublished() {
    List<OutboxEvent> events = events(50, 5);
    events.set(9, Events.defective(10, "aggregate_id is NULL"));
    FakeSource source = new FakeSource(3, events);
    FakeSink sink = new FakeSink();
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(source.settled)
        .filteredOn(s -> s instanceof Settlement.DeadLetter)
        .singleElement()
        .isInstanceOfSatisfying(
            Settlement.DeadLetter.class,
            d -> {
              assertThat(d.event().id()).isEqualTo(10);
              assertThat(d.reason()).isEqualTo(Settlement.DeadLetterReason.PERMANENT);
              assertThat(d.error()).isEqualTo("aggregate_id is NULL");
            });
    assertThat(sink.published).hasSize(49).noneMatch(r -> r.event().id() == 10);
  }

  @Test
  void aDeadLetterTheTableRefusesIsCountedKeptAndMovedOnceTheTableTakesIt() {
    FakeSource source = new FakeSource(3, events(42, 5)); // 42 is the last of its key
    source.deadLetterMoveFailure = "dead-letter move failed: permission denied";
    FakeSink sink = new FakeSink();
    sink.verdicts =
        e -> e.event().id() == 42 ? Verdict.permanent("record too large") : Verdict.published();
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();

    // Event 42 stays in the outbox as a retry, tried again when due; every other event is
    // published once: the batches it was in were recorded, not published again.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(pipeline.stats().deadLetterMoveFailures()).isGreaterThanOrEqualTo(2);
              assertThat(source.pendingCount()).isEqualTo(1);
            });
    assertThat(pipeline.stats().deadLettered()).isZero();
    assertThat(sink.published).hasSize(41);
    assertThat(sink.published.stream().map(e -> e.event().id()).distinct()).hasSize(41);

    source.deadLetterMoveFailure = null;
    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(pipeline.stats().deadLettered()).isEqualTo(1);
  }

  @Test
  void retriesHoldBackTheKeyThenDeadLetterAfterMaxAttempts() {
    FakeSource source = new FakeSource(3, events(60, 3));
    FakeSink sink = new FakeSink();
    // Event 4 (key k1) always fails in a retryable way: k1's later events wait for it.
    sink.verdicts =
        e -> e.event().id() == 4 ? Verdict.retryable("not enough replicas") : Verdict.published();
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    List<Settlement> forFour = source.settled.stream().filter(s -> s.event().id() == 4).toList();
    assertThat(forFour).hasSize(3);
    assertThat(forFour.get(0)).isInstanceOf(Settlement.Retry.class);
    assertThat(forFour.get(1)).isInstanceOf(Settlement.Retry.class);
    assertThat(forFour.get(2))
        .isInstanceOfSatisfying(
            Settlement.DeadLetter.class, d -> assertThat(d.attempts()).isEqualTo(3));
    // No later k1 event was published before event 4 was dead-lettered.
    int deadLetteredAt = source.settled.indexOf(forFour.get(2));
    assertThat(source.settled.subList(0, deadLetteredAt))
        .filteredOn(s -> s instanceof Settlement.Published)
        .noneMatch(s -> s.event().aggregateId().equals("k1") && s.event().id() > 4);
    assertThat(sink.published).hasSize(59);
    assertKeyOrder(sink.published);
    assertThat(source.claimedAhead.get()).isPositive();
  }

  @Test
  void aRetriedEventThatIsRefusedAgainKeepsItsKeysLaterEventsBehindItEvenWhenTheBrokerTakesThem() {
    // Event 4 (key k1) failed before (one attempt counted) and is refused once more; the sink,
    // like Kafka after a per-record refusal, would take k1's later events of the same call.
    List<OutboxEvent> events = new ArrayList<>(events(60, 3));
    OutboxEvent four = events.get(3);
    events.set(3, Events.event(four.id(), four.aggregateId(), 1));
    FakeSource source = new FakeSource(3, events);
    FakeSink sink = new FakeSink();
    sink.independentRecords = true;
    java.util.concurrent.atomic.AtomicInteger refusals =
        new java.util.concurrent.atomic.AtomicInteger();
    sink.verdicts =
        e ->
            e.event().id() == 4 && refusals.incrementAndGet() <= 1
                ? Verdict.retryable("INVALID_RECORD")
                : Verdict.published();
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(refusals.get()).isEqualTo(2);
    assertThat(sink.published).hasSize(60);
    assertKeyOrder(sink.published);
  }

  @Test
  void aBrokerAwayWhileAnInDoubtTransactionIsSettledIsAnOutageAndTheLaneCarriesOnAfterIt() {
    FakeSource source = new FakeSource(1, events(20, 2));
    source.watermark = watermarkSettlingInto(source, false);
    java.util.concurrent.atomic.AtomicInteger transactions =
        new java.util.concurrent.atomic.AtomicInteger();
    ScriptedTransactionalSink[] sink = new ScriptedTransactionalSink[1];
    sink[0] =
        new ScriptedTransactionalSink(
            batch -> {
              if (transactions.incrementAndGet() == 1) {
                // The commit's outcome is unknown, and the broker stays away for three reads.
                sink[0].failingLedgerReads.set(3);
                return new io.outbox.relay.spi.SinkTransaction.Failed("EndTxn timed out", true);
              }
              return null;
            });
    pipeline = newPipeline(settings(3, null), source, sink[0]);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(sink[0].ledgerReads.get()).isEqualTo(5); // at activation, 3 failed, then read
    // Each failed read paused publishing as an outage (the fake's probe finds the sink up at once;
    // a real broker away keeps the gate closed, one outage); no lane failure, nothing charged.
    assertThat(pipeline.stats().sinkUnavailable()).isEqualTo(3);
    assertThat(pipeline.stats().published()).isEqualTo(20);
    assertThat(pipeline.stats().retried()).isZero();
    assertThat(pipeline.stats().deadLettered()).isZero();
  }

  @Test
  void anAbandonedBatchReleasesTheBatchClaimedAheadSoNoLaterEventOfItsKeysOvertakesIt() {
    // At least once, one lane: batch A (7 events of 3 keys) is stuck at the sink, B (their keys'
    // later events) is claimed ahead. A stops being owned for a moment and is abandoned. B may go
    // out only after A's events were published again: before, B went at once and its own claim
    // ahead took A's events behind it.
    FakeSource source = new FakeSource(1, events(21, 3));
    FakeSink sink = new FakeSink();
    java.util.concurrent.CompletableFuture<Void> stall =
        new java.util.concurrent.CompletableFuture<>();
    sink.stalled = stall;
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.claimsMade() >= 2); // A, B ahead
    source.disownClaim(0);
    await().atMost(Duration.ofSeconds(10)).until(() -> pipeline.stats().released() >= 7);
    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    stall.complete(null); // A's first copies arrive late: duplicates, after the first deliveries

    Map<String, List<Long>> firstDeliveries = new java.util.HashMap<>();
    java.util.Set<Long> seen = new java.util.HashSet<>();
    for (RoutedEvent r : sink.published) {
      if (seen.add(r.event().id())) {
        firstDeliveries
            .computeIfAbsent(r.event().aggregateId(), k -> new ArrayList<>())
            .add(r.event().id());
      }
    }
    assertThat(seen).hasSize(21);
    firstDeliveries.forEach(
        (key, ids) -> assertThat(ids).as("first deliveries of key %s", key).isSorted());
  }

  @Test
  void anAbandonedTransactionThatCommitsLaterIsSettledFromTheLedgerNotSentAgain() {
    // One lane: claim A (7 events) is in a transaction that stalls, B is claimed ahead. A stops
    // being owned for a moment (a lease renewal late under load): the lane abandons A's
    // transaction, which still commits. Nothing may go out before the ledger is read: B's own
    // claim-ahead would take A's released events and send them a second time.
    FakeSource source = new FakeSource(1, events(21, 3));
    source.watermark = watermarkSettlingInto(source, true);
    ScriptedTransactionalSink sink = new ScriptedTransactionalSink(batch -> null);
    java.util.concurrent.CompletableFuture<io.outbox.relay.spi.SinkTransaction> stall =
        new java.util.concurrent.CompletableFuture<>();
    sink.stalled = stall;
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.claimsMade() >= 2); // A, B ahead
    assertThat(sink.transactions).hasSize(1);
    source.disownClaim(0);
    await().atMost(Duration.ofSeconds(10)).until(() -> pipeline.stats().released() >= 7);
    stall.complete(null); // A's transaction commits after all

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    Map<Long, Integer> sent = new java.util.TreeMap<>();
    for (int t = 0; t < sink.transactions.size(); t++) {
      boolean committed = false;
      for (io.outbox.relay.spi.LedgerEntry e : sink.committed) {
        committed |= e.position().offset() == t;
      }
      if (committed) {
        sink.transactions.get(t).forEach(r -> sent.merge(r.event().id(), 1, Integer::sum));
      }
    }
    assertThat(sent).as("committed transactions per event").hasSize(21);
    assertThat(sent.values()).as("each event in one committed transaction").containsOnly(1);
  }

  @Test
  void stopFinishesInFlightBatchesAndClosesPlugins() {
    FakeSource source = new FakeSource(3, events(30, 30));
    FakeSink sink = new FakeSink();
    sink.delayMillis = 300;
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                pipeline.stats().batches() > 0
                    || !source.settled.isEmpty()
                    || sink.published.size() > 0
                    || true);

    pipeline.stop(Duration.ofSeconds(5));
    Pipeline stopped = pipeline;
    pipeline = null;

    assertThat(source.closed).isTrue();
    assertThat(sink.closed).isTrue();
    // Everything the sink acknowledged was settled as published: nothing half-marked.
    assertThat(source.settled.stream().filter(s -> s instanceof Settlement.Published).count())
        .isEqualTo(sink.published.size());
    assertThat(stopped.stats().published()).isEqualTo(sink.published.size());
  }

  @Test
  void aClaimNoLongerOwnedIsReleasedUnpublished() {
    FakeSource source = new FakeSource(3, events(50, 5));
    source.owned = false; // this instance's lease ran out: another may publish these keys
    FakeSink sink = new FakeSink();
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(5)).until(() -> source.activations.get() >= 3);
    assertThat(sink.published).isEmpty();
    assertThat(source.settled).isEmpty();
    assertThat(source.pendingCount()).isEqualTo(50);
    source.owned = true;
    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertKeyOrder(sink.published);
  }

  /**
   * Issue #29 point 6: a batch handed to the sink when the lease runs out (a frozen instance waking
   * up) is abandoned, and counted: the broker may take it, after newer events of its keys that the
   * instance now active published meanwhile (a late re-send).
   */
  @Test
  void aBatchAbandonedAfterTheLeaseRanOutIsCountedAsUnrecorded() {
    FakeSource source = new FakeSource(1, events(10, 5));
    FakeSink sink = new FakeSink();
    CompletableFuture<Void> stall = new CompletableFuture<>();
    sink.stalled = stall; // the broker holds the first batch
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(5)).until(() -> pipeline.stats().attempts() > 0);
    long handed = pipeline.stats().attempts();
    source.owned = false; // the lease ran out while the batch was with the broker
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> pipeline.stats().unrecordedAfterLeaseLoss() > 0);
    stall.complete(null);
    assertThat(pipeline.stats().unrecordedAfterLeaseLoss()).isEqualTo(handed);
    assertThat(source.settled).isEmpty();
  }

  @Test
  void aStalledLaneGivesTheActiveRoleUpAndAbandonsItsBatch() {
    FakeSource source = new FakeSource(3, events(20, 5));
    source.yields = true;
    FakeSink sink = new FakeSink();
    sink.delayMillis = 60_000; // a broker this instance cannot reach: the publish never answers
    pipeline = newPipeline(settings(3, null, Duration.ofMillis(500)), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> !source.yieldedBecause.isEmpty());
    assertThat(source.yieldedBecause.get(0)).contains("made no progress").contains("publishing");
    // The abandoned batch is released, not settled: the new active instance claims it again.
    await().atMost(Duration.ofSeconds(5)).until(() -> pipeline.role() == Role.STANDBY);
    assertThat(source.settled).isEmpty();
    assertThat(source.pendingCount()).isEqualTo(20);
  }

  @Test
  void aStalledLaneWithNoStandbyCarriesOn() {
    FakeSource source = new FakeSource(3, events(20, 5));
    FakeSink sink = new FakeSink();
    sink.delayMillis = 1_500;
    pipeline = newPipeline(settings(3, null, Duration.ofMillis(500)), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertThat(source.yieldedBecause).isNotEmpty();
    assertThat(source.activations.get()).isEqualTo(1);
  }

  @Test
  void aStallIsOfferedAgainWhileItLastsSoThatAStandbyThatConnectsLaterTakesOver() {
    FakeSource source = new FakeSource(3, events(20, 5));
    FakeSink sink = new FakeSink();
    sink.delayMillis = 60_000;
    pipeline = newPipeline(settings(3, null, Duration.ofMillis(300)), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> !source.yieldedBecause.isEmpty());
    source.yields = true; // a standby connects while the stall lasts
    await().atMost(Duration.ofSeconds(5)).until(() -> source.yieldedBecause.size() >= 2);
    await().atMost(Duration.ofSeconds(5)).until(() -> !source.owned);
  }

  @Test
  void aSinkOutageThatNoInstanceGetsPastIsHandedOverOnceNotToAndFro() throws Exception {
    FakeSource source = new FakeSource(3, events(20, 5));
    source.yields = true;
    source.handedBack = true; // the standby cannot reach the broker either and hands it back
    FakeSink sink = new FakeSink();
    sink.up = false;
    pipeline = newPipeline(settings(3, null, Duration.ofMillis(300)), source, sink);
    pipeline.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> source.activations.get() >= 2);
    Thread.sleep(1_500); // five stall timeouts, the gate still closed
    assertThat(source.yieldedBecause).hasSize(1);
    assertThat(source.activations.get()).isEqualTo(2);

    sink.up = true; // the broker is back: the events flow, in key order
    await().atMost(Duration.ofSeconds(10)).until(() -> source.pendingCount() == 0);
    assertKeyOrder(sink.published);
  }

  @Test
  void anErrorInALaneStopsThePipelineAndIsReportedAsFatal() {
    FakeSource source = new FakeSource(3, events(20, 5));
    source.claimError = new OutOfMemoryError("test: heap exhausted");
    FakeSink sink = new FakeSink();
    List<String> fatal = new java.util.concurrent.CopyOnWriteArrayList<>();
    pipeline = newPipeline(settings(3, null), source, sink);
    pipeline.onFatal((name, error) -> fatal.add(name + ": " + error.getMessage()));
    pipeline.start();

    await().atMost(Duration.ofSeconds(5)).until(() -> pipeline.failure() != null);
    assertThat(pipeline.failure()).contains("OutOfMemoryError").contains("heap exhausted");
    assertThat(fatal).containsExactly("test: test: heap exhausted");
    await().atMost(Duration.ofSeconds(5)).until(() -> pipeline.role() == Role.STANDBY);
    assertThat(source.activations.get()).isEqualTo(1); // not restarted: the process exits
  }

  private static void assertKeyOrder(List<RoutedEvent> published) {
    Map<String, Long> last = new HashMap<>();
    for (RoutedEvent e : published) {
      Long previous = last.put(e.event().aggregateId(), e.event().id());
      if (previous != null) {
        assertThat(e.event().id())
            .as("order of key %s", e.event().aggregateId())
            .isGreaterThan(previous);
      }
    }
  }
}
