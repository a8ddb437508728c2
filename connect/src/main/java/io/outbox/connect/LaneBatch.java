package io.outbox.connect;

import io.outbox.relay.pipeline.RetryPolicy;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
  private final Set<Long> copiesWaiting = new HashSet<>();
  private final List<Settlement.DeadLetter> uncopied = new ArrayList<>();

  private String deliveries = "";

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

  /** The batch's deliveries as its records' offsets name them ({@link OutboxRecords#batch}). */
  synchronized void deliveries(String ids) {
    this.deliveries = ids;
  }

  synchronized String deliveries() {
    return deliveries;
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
      Settlement s = Failures.retryOrDeadLetter(e, maxAttempts, retry, error);
      settlements.add(s);
      if (s instanceof Settlement.DeadLetter dl) {
        uncopied.add(dl);
      }
    }
  }

  /** A dead letter's copy ({@code dead-letter.destination}) is sent: it waits for its ack. */
  synchronized void copySent(long id) {
    copiesWaiting.add(id);
  }

  /** The worker acknowledged (or gave up) a dead letter's copy. */
  synchronized void copyDone(long id) {
    copiesWaiting.remove(id);
  }

  /**
   * Whether some records were given up and dead-lettered after the batch was sent: their copies are
   * still to be sent before the batch is settled.
   */
  synchronized boolean hasUncopiedDeadLetters() {
    return !uncopied.isEmpty();
  }

  /** The dead letters of {@link #hasUncopiedDeadLetters()}, once: their copies are being sent. */
  synchronized List<Settlement.DeadLetter> takeUncopiedDeadLetters() {
    List<Settlement.DeadLetter> out = List.copyOf(uncopied);
    uncopied.clear();
    return out;
  }

  /** Whether every event has its settlement and every dead letter's copy its acknowledgement. */
  synchronized boolean complete() {
    return waiting.isEmpty() && copiesWaiting.isEmpty();
  }

  /** The settlements; call once {@link #complete()}. */
  synchronized List<Settlement> settlements() {
    return List.copyOf(settlements);
  }

  synchronized int size() {
    return claim.events().size();
  }
}
