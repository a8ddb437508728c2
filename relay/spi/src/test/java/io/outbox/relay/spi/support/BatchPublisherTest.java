package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class BatchPublisherTest {

  private static final AtomicLong IDS = new AtomicLong();

  private final List<BatchPublisher> publishers = new ArrayList<>();

  @AfterEach
  void shutdown() {
    publishers.forEach(BatchPublisher::shutdown);
  }

  private BatchPublisher publisher(Duration timeout) {
    BatchPublisher p =
        new BatchPublisher(
            "Test",
            "p",
            LoggerFactory.getLogger(BatchPublisherTest.class),
            timeout,
            "publish-timeout",
            e -> "topic '" + e.destination() + "'",
            Ticker.SYSTEM);
    publishers.add(p);
    return p;
  }

  static RoutedEvent event(String key) {
    return new RoutedEvent(
        new OutboxEvent(
            IDS.incrementAndGet(),
            UUID.randomUUID(),
            "order",
            key,
            "OrderCreated",
            null,
            "{}".getBytes(StandardCharsets.UTF_8),
            PayloadFormat.JSON,
            null,
            Instant.now(),
            0),
        "orders");
  }

  private static List<Verdict> await(java.util.concurrent.CompletionStage<List<Verdict>> stage)
      throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void sendsTurnByTurnAndHoldsBackAFailedKeysLaterEventsOfTheBatch() throws Exception {
    List<RoutedEvent> batch = List.of(event("a"), event("b"), event("a"), event("b"));
    List<List<Integer>> turns = new ArrayList<>();
    List<Verdict> verdicts =
        await(
            publisher(Duration.ofSeconds(10))
                .publish(
                    batch,
                    (b, turn) -> {
                      turns.add(turn);
                      for (int i : turn) {
                        b.complete(i, i == 0 ? Verdict.retryable("boom") : Verdict.published());
                      }
                    }));
    assertThat(turns)
        .as("event 2 never sent: its key failed")
        .containsExactly(List.of(0, 1), List.of(3));
    assertThat(verdicts)
        .extracting(Verdict::outcome)
        .containsExactly(
            Outcome.RETRYABLE, Outcome.PUBLISHED, Outcome.RETRYABLE, Outcome.PUBLISHED);
    assertThat(verdicts.get(2).error()).startsWith("not sent: an earlier event").contains("boom");
  }

  @Test
  void aPermanentFailureHoldsNothingBack() throws Exception {
    List<List<Integer>> turns = new ArrayList<>();
    List<Verdict> verdicts =
        await(
            publisher(Duration.ofSeconds(10))
                .publish(
                    List.of(event("a"), event("a")),
                    (b, turn) -> {
                      turns.add(turn);
                      for (int i : turn) {
                        b.complete(i, i == 0 ? Verdict.permanent("bad") : Verdict.published());
                      }
                    }));
    assertThat(turns).containsExactly(List.of(0), List.of(1));
    assertThat(verdicts)
        .extracting(Verdict::outcome)
        .containsExactly(Outcome.PERMANENT, Outcome.PUBLISHED);
  }

  @Test
  void aKeysNextEventIsSentOnlyOnceTheBrokerAnsweredTheOneBefore() throws Exception {
    // The broker answers on its own thread, later: the sender must wait for each key's answer.
    java.util.concurrent.ScheduledExecutorService broker =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    List<List<Integer>> turns = new java.util.concurrent.CopyOnWriteArrayList<>();
    try {
      List<Verdict> verdicts =
          await(
              publisher(Duration.ofSeconds(10))
                  .publish(
                      List.of(event("a"), event("b"), event("a"), event("a"), event("c")),
                      (b, turn) -> {
                        turns.add(turn);
                        for (int i : turn) {
                          broker.schedule(
                              () -> b.complete(i, Verdict.published()), 20, TimeUnit.MILLISECONDS);
                        }
                      }));
      assertThat(verdicts).extracting(Verdict::outcome).containsOnly(Outcome.PUBLISHED);
    } finally {
      broker.shutdownNow();
    }
    assertThat(turns.get(0)).containsExactly(0, 1, 4);
    assertThat(turns.stream().flatMap(List::stream).toList())
        .as("each event sent once, a's in order")
        .containsExactlyInAnyOrder(0, 1, 2, 3, 4)
        .containsSubsequence(0, 2, 3);
    assertThat(turns)
        .as("2 and 3 (both a) never in one turn")
        .noneMatch(t -> t.containsAll(List.of(2, 3)));
  }

  @Test
  void unansweredEventsAreSinkUnavailableAtTheTimeoutAndLateAcksChangeNothing() throws Exception {
    List<PendingBatch> sent = new ArrayList<>();
    List<Verdict> verdicts =
        await(
            publisher(Duration.ofMillis(200))
                .publish(
                    List.of(event("a"), event("b")),
                    (b, turn) -> {
                      b.complete(0, Verdict.published());
                      sent.add(b); // event 1 is never acked
                    }));
    assertThat(verdicts)
        .extracting(Verdict::outcome)
        .containsExactly(Outcome.PUBLISHED, Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(1).error())
        .isEqualTo("topic 'orders': no answer from Test within publish-timeout (200 ms)");
    sent.get(0).complete(1, Verdict.published());
    assertThat(sent.get(0).verdicts().get(1).outcome()).isEqualTo(Outcome.SINK_UNAVAILABLE);
  }

  @Test
  void aFullWindowAtTheDeadlineMakesTheRestSinkUnavailable() throws Exception {
    InFlightWindow window = new InFlightWindow(1, "max-pending");
    List<Verdict> verdicts =
        await(
            publisher(Duration.ofMillis(300))
                .publish(
                    List.of(event("a"), event("b"), event("c")),
                    (b, turn) -> {
                      for (int i = 0; i < 3; i++) {
                        if (!window.acquire(b.deadline())) {
                          b.failFrom(i, window.full(b, i));
                          return;
                        }
                        // sent, never acked: the permit stays taken
                      }
                    }));
    assertThat(verdicts).extracting(Verdict::outcome).containsOnly(Outcome.SINK_UNAVAILABLE);
    // The window's wait and the batch timer end at the same deadline: whichever answers first
    // names the cause, and both make the rest sink-unavailable (never published, never failed).
    assertThat(verdicts.get(1).error())
        .containsAnyOf("max-pending (1) messages still unanswered", "within publish-timeout");
  }

  @Test
  void aSenderDefectIsRetryableSoThatItEndsAsADeadLetter() throws Exception {
    List<Verdict> verdicts =
        await(
            publisher(Duration.ofSeconds(10))
                .publish(
                    List.of(event("a")),
                    (b, turn) -> {
                      throw new IllegalStateException("defect");
                    }));
    assertThat(verdicts.get(0).outcome()).isEqualTo(Outcome.RETRYABLE);
    assertThat(verdicts.get(0).error()).contains("IllegalStateException: defect");
  }

  @Test
  void drainWaitsForInFlightBatchesThenExpiresThemAndRefusesNewOnes() throws Exception {
    BatchPublisher publisher = publisher(Duration.ofSeconds(30));
    CountDownLatch sending = new CountDownLatch(1);
    var stage = publisher.publish(List.of(event("a")), (b, turn) -> sending.countDown());
    assertThat(sending.await(5, TimeUnit.SECONDS)).isTrue();
    Duration left = publisher.drain(Duration.ofMillis(100));
    assertThat(left).isLessThan(Duration.ofMillis(100));
    List<Verdict> verdicts = await(stage);
    assertThat(verdicts.get(0).outcome()).isEqualTo(Outcome.SINK_UNAVAILABLE);
    assertThat(verdicts.get(0).error()).contains("closed before Test answered");
    assertThat(await(publisher.publish(List.of(event("b")), (b, turn) -> {})).get(0).error())
        .contains("the Test sink is closed");
    assertThat(publisher.probe(() -> true, Duration.ofSeconds(1))).isFalse();
  }

  @Test
  void probeIsFalseWhenTheCheckTakesLongerThanTheTimeout() {
    BatchPublisher publisher = publisher(Duration.ofSeconds(30));
    assertThat(
            publisher.probe(
                () -> {
                  new CountDownLatch(1).await(); // never answers
                  return true;
                },
                Duration.ofMillis(100)))
        .isFalse();
    assertThat(publisher.probe(() -> true, Duration.ofSeconds(5))).isTrue();
  }

  @Test
  void unwrapFindsTheFailureInsideAnAsynchronousClientsWrappers() {
    java.io.IOException io = new java.io.IOException("503 no responders");
    assertThat(
            BatchPublisher.unwrap(
                new java.util.concurrent.CompletionException(
                    new java.util.concurrent.ExecutionException(new RuntimeException(io)))))
        .isSameAs(io);
    IllegalStateException own = new IllegalStateException("closed", io);
    assertThat(BatchPublisher.unwrap(own)).isSameAs(own); // a failure of its own is kept
    RuntimeException bare = new RuntimeException("no cause");
    assertThat(BatchPublisher.unwrap(bare)).isSameAs(bare);
  }
}
