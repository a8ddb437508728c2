package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The turns of a batch: which of its events may go to the broker, and when (per-key order). */
class PendingBatchTest {

  private static PendingBatch batch(long timeoutMillis, String... keys) {
    return new PendingBatch(
        Stream.of(keys).map(BatchPublisherTest::event).toList(),
        Ticker.SYSTEM.deadline(Duration.ofMillis(timeoutMillis)),
        e -> "topic '" + e.destination() + "'",
        b -> {});
  }

  @Test
  void theFirstTurnHoldsEachKeysFirstEventAndTheNextComesWithTheVerdictBefore() throws Exception {
    PendingBatch batch = batch(10_000, "a", "b", "a", "c", "b", "a");
    assertThat(batch.nextTurn()).containsExactly(0, 1, 3);

    batch.complete(1, Verdict.published());
    assertThat(batch.nextTurn()).containsExactly(4);
    batch.complete(0, Verdict.permanent("dead-lettered: the key goes on"));
    batch.complete(3, Verdict.published());
    batch.complete(4, Verdict.published());
    assertThat(batch.nextTurn()).containsExactly(2);
    batch.complete(2, Verdict.published());
    assertThat(batch.nextTurn()).containsExactly(5);
    batch.complete(5, Verdict.published());
    assertThat(batch.nextTurn()).as("done").isEmpty();
    assertThat(batch.isDone()).isTrue();
  }

  @Test
  void aRefusalHoldsEveryLaterEventOfItsKeyBehindAtOnce() throws Exception {
    PendingBatch batch = batch(10_000, "a", "b", "a", "a");
    assertThat(batch.nextTurn()).containsExactly(0, 1);

    batch.complete(0, Verdict.unavailable("nack"));

    for (int i : List.of(2, 3)) {
      assertThat(batch.verdict(i).outcome()).isEqualTo(Outcome.SINK_UNAVAILABLE);
      assertThat(batch.verdict(i).error())
          .isEqualTo("not sent: an earlier event of the same" + " aggregate failed: nack");
    }
    batch.complete(1, Verdict.published());
    assertThat(batch.nextTurn()).isEmpty();
    assertThat(batch.isDone()).isTrue();
  }

  @Test
  void aLaterEventSentAheadOfItsTurnIsNotPublishedWhenAnEarlierOneFails() {
    // A sink that sends ahead of turns (Kafka's producer) and hears of the refusal of event 0 after
    // event 1 of the key was sent: event 1 stays behind, whatever its own ack says later.
    PendingBatch batch =
        PendingBatch.withoutTurns(
            Stream.of("a", "a").map(BatchPublisherTest::event).toList(),
            Ticker.SYSTEM.deadline(Duration.ofSeconds(10)),
            e -> "topic '" + e.destination() + "'",
            b -> {});
    batch.complete(0, Verdict.retryable("INVALID_RECORD"));
    batch.complete(1, Verdict.published());
    assertThat(batch.verdict(1).outcome()).isEqualTo(Outcome.RETRYABLE);
  }

  @Test
  void anEventSentBackTakesItsTurnAgainBeforeItsKeysNextEvent() throws Exception {
    PendingBatch batch = batch(10_000, "a", "b", "a");
    assertThat(batch.nextTurn()).containsExactly(0, 1);

    batch.resendLater(0); // its channel died unanswered
    batch.complete(1, Verdict.published());

    assertThat(batch.nextTurn()).containsExactly(0);
    batch.complete(0, Verdict.published());
    assertThat(batch.nextTurn()).containsExactly(2);
  }

  @Test
  void aSenderWaitingForATurnWakesOnTheVerdictBefore() throws Exception {
    PendingBatch batch = batch(10_000, "a", "a");
    assertThat(batch.nextTurn()).containsExactly(0);
    CompletableFuture<List<Integer>> next =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return batch.nextTurn();
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    Thread.sleep(50);
    assertThat(next).as("waits while event 0 is unanswered").isNotDone();

    batch.complete(0, Verdict.published());

    assertThat(next).succeedsWithin(java.time.Duration.ofSeconds(5)).isEqualTo(List.of(1));
  }

  @Test
  void noTurnIsGivenOnceTheDeadlinePassed() throws Exception {
    PendingBatch batch = batch(100, "a", "a");
    assertThat(batch.nextTurn()).containsExactly(0);
    long started = System.nanoTime();
    assertThat(batch.nextTurn()).as("event 0 never answered").isEmpty();
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(5_000);
  }
}
