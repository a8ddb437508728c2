package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class InFlightWindowTest {

  private static RoutedEvent event(long id, String key) {
    return new RoutedEvent(
        new OutboxEvent(
            id,
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

  private static PendingBatch batch(RoutedEvent... events) {
    return new PendingBatch(
        List.of(events),
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50),
        e -> "subject '" + e.destination() + "'",
        b -> {});
  }

  @Test
  void admitsWhileThereIsRoomThenFailsTheRestWhenFullAtTheDeadline() throws Exception {
    InFlightWindow window = new InFlightWindow(1, "max-pending");
    PendingBatch batch = batch(event(1, "a"), event(2, "b"), event(3, "c"));
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
    assertThat(window.acquire(System.nanoTime())).isTrue();
    assertThat(window.acquire(System.nanoTime())).isFalse(); // the window held one permit only
  }

  @Test
  void anEventWhoseKeyFailedWhileWaitingIsHeldBehindAndGivesItsRoomBack() throws Exception {
    InFlightWindow window = new InFlightWindow(1, "max-pending");
    PendingBatch batch = batch(event(1, "a"), event(2, "a"));
    assertThat(window.admit(batch, 0)).isTrue();
    batch.complete(0, Verdict.retryable("nack"));
    window.release();
    assertThat(window.admit(batch, 1)).isFalse();
    assertThat(batch.verdict(1).outcome()).isEqualTo(Outcome.RETRYABLE);
    assertThat(batch.verdict(1).error()).startsWith("not sent: an earlier event");
    assertThat(window.acquire(System.nanoTime())).isTrue(); // the room came back
  }
}
