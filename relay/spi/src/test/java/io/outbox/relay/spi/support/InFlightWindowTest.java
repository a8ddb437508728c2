package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class InFlightWindowTest {

  private final InFlightWindow window = new InFlightWindow(1, "max-pending");

  private static PendingBatch batch(String... keys) {
    return new PendingBatch(
        Stream.of(keys).map(BatchPublisherTest::event).toList(),
        Ticker.SYSTEM.deadline(Duration.ofMillis(50)),
        e -> "subject '" + e.destination() + "'",
        b -> {});
  }

  @Test
  void admitsWhileThereIsRoomThenFailsTheRestWhenFullAtTheDeadline() throws Exception {
    PendingBatch batch = batch("a", "b", "c");
    assertThat(window.admit(batch, 0)).isTrue();
    assertThat(window.admit(batch, 1)).isFalse();
    assertThat(batch.verdict(0)).isNull(); // still waiting for its ack
    for (int i = 1; i < 3; i++) {
      assertThat(batch.verdict(i).outcome()).isEqualTo(Outcome.SINK_UNAVAILABLE);
      assertThat(batch.verdict(i).error())
          .contains("max-pending (1) messages still unanswered")
          .contains("subject 'orders'");
    }
    assertThat(window.admit(batch, 2)).isFalse(); // has its verdict: not sent
    window.release(); // event 0's ack
    assertThat(window.acquire(Ticker.SYSTEM.deadline(Duration.ZERO))).isTrue();
    assertThat(window.acquire(Ticker.SYSTEM.deadline(Duration.ZERO)))
        .isFalse(); // the window held one permit only
  }

  @Test
  void anEventWhoseKeyFailedWhileWaitingIsHeldBehindAndGivesItsRoomBack() throws Exception {
    PendingBatch batch = batch("a", "a");
    assertThat(window.admit(batch, 0)).isTrue();
    batch.complete(0, Verdict.retryable("nack"));
    window.release();
    assertThat(window.admit(batch, 1)).isFalse();
    assertThat(batch.verdict(1).outcome()).isEqualTo(Outcome.RETRYABLE);
    assertThat(batch.verdict(1).error()).startsWith("not sent: an earlier event");
    assertThat(window.acquire(Ticker.SYSTEM.deadline(Duration.ZERO)))
        .isTrue(); // the room came back
  }

  @Test
  void sendGivesTheVerdictFromTheAckBeforeTheRoomComesBack() throws Exception {
    PendingBatch batch = batch("a", "a", "b");
    java.util.concurrent.CompletableFuture<String> ack0 =
        new java.util.concurrent.CompletableFuture<>();
    window.send(
        batch, 0, () -> ack0, e -> Verdict.retryable("failed: " + BatchPublisher.describe(e)));
    assertThat(window.acquire(Ticker.SYSTEM.deadline(Duration.ZERO)))
        .isFalse(); // event 0 holds the room
    ack0.completeExceptionally(new java.io.IOException("nack"));
    assertThat(batch.verdict(0)).isEqualTo(Verdict.retryable("failed: IOException: nack"));
    // Event 1 shares event 0's key: held behind, never sent.
    window.send(
        batch,
        1,
        () -> {
          throw new AssertionError("sent");
        },
        e -> null);
    assertThat(batch.verdict(1).error()).startsWith("not sent: an earlier event");
    window.send(
        batch, 2, () -> java.util.concurrent.CompletableFuture.completedFuture("ok"), e -> null);
    assertThat(batch.verdict(2).isPublished()).isTrue();
    assertThat(window.acquire(Ticker.SYSTEM.deadline(Duration.ZERO)))
        .isTrue(); // every room came back
  }

  @Test
  void aSendThatThrowsGivesTheRoomBack() throws Exception {
    PendingBatch batch = batch("a");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                window.send(
                    batch,
                    0,
                    () -> {
                      throw new IllegalStateException("closed");
                    },
                    e -> null))
        .isInstanceOf(IllegalStateException.class);
    assertThat(batch.verdict(0)).isNull(); // the sink decides
    assertThat(window.acquire(Ticker.SYSTEM.deadline(Duration.ZERO))).isTrue();
  }
}
