package io.outbox.connect;

import io.outbox.relay.pipeline.RetryPolicy;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One claimed batch of a lane while Connect produces it: collects a settlement per event as the
 * worker acknowledges each record ({@code commitRecord}), and is settled once every event has one.
 * Thread-safe: acknowledgements arrive on the producer's thread, settlement runs on the task's.
 */
final class LaneBatch {

  private final int lane;
  private final Claim claim;
  private final Map<Long, OutboxEvent> waiting = new HashMap<>();
  private final List<Settlement> settlements = new ArrayList<>();

  LaneBatch(int lane, Claim claim) {
    this.lane = lane;
    this.claim = claim;
  }

  int lane() {
    return lane;
  }

  Claim claim() {
    return claim;
  }

  /** An event that is sent: it waits for the worker's acknowledgement. */
  synchronized void sent(OutboxEvent event) {
    waiting.put(event.id(), event);
  }

  /** An event settled without being sent (a defect, an invalid topic). */
  synchronized void settledNow(Settlement settlement) {
    settlements.add(settlement);
  }

  /** The broker acknowledged the event's record. */
  synchronized void published(long id) {
    OutboxEvent e = waiting.remove(id);
    if (e != null) {
      settlements.add(new Settlement.Published(e));
    }
  }

  /**
   * The worker gave the record up without producing it: a retryable failure of the event, counted
   * toward {@code max-attempts} like a failed publish of the daemon.
   */
  synchronized void failed(long id, int maxAttempts, RetryPolicy retry, String error) {
    OutboxEvent e = waiting.remove(id);
    if (e != null) {
      settlements.add(Failures.retryOrDeadLetter(e, maxAttempts, retry, error));
    }
  }

  /** Whether every event has its settlement. */
  synchronized boolean complete() {
    return waiting.isEmpty();
  }

  /** The settlements; call once {@link #complete()}. */
  synchronized List<Settlement> settlements() {
    return List.copyOf(settlements);
  }

  synchronized int size() {
    return claim.events().size();
  }
}
