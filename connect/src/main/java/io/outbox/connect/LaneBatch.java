package io.outbox.connect;

import io.outbox.relay.pipeline.KeyOrder;
import io.outbox.relay.pipeline.SettlementPlanner;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Verdict;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * One claimed batch of a lane while Connect produces it. Its records go to the worker in waves
 * ({@link KeyOrder}: per-key order is decided there): without a transaction per batch a key has one
 * event per wave, so that a record the worker's producer gives up cannot be overtaken by a later
 * record of its key in the partition's next request; with one, the whole batch is one wave (a
 * refusal aborts the transaction). A verdict per event is collected as the worker acknowledges each
 * record ({@code commitRecord}); once every wave is answered, {@link SettlementPlanner} turns the
 * verdicts into settlements, a failed event holding back its key's later ones. Thread-safe:
 * acknowledgements arrive on the producer's thread, the rest runs on the task's.
 */
final class LaneBatch {

  private final int lane;
  private final Claim claim;
  private final List<OutboxEvent> events;
  private final Verdict[] verdicts;
  private final SourceRecord[] records;
  private final boolean[] handedOut;
  private final Map<Long, Integer> positions = new HashMap<>();
  private final KeyOrder.Held held = new KeyOrder.Held();
  private final Set<Long> copiesWaiting = new HashSet<>();
  private final List<Settlement.DeadLetter> uncopied = new ArrayList<>();

  private List<List<Integer>> waves = List.of();
  private int wave = -1; // the last wave handed to the worker
  private int unanswered; // records of that wave without a verdict
  private List<Settlement> settlements; // once planned
  private String deliveries = "";

  LaneBatch(int lane, Claim claim) {
    this.lane = lane;
    this.claim = claim;
    this.events = claim.events();
    this.verdicts = new Verdict[events.size()];
    this.records = new SourceRecord[events.size()];
    this.handedOut = new boolean[events.size()];
    for (int i = 0; i < events.size(); i++) {
      positions.put(events.get(i).id(), i);
    }
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

  /**
   * An event judged without being sent: in Kafka already (published), or one Kafka would refuse.
   */
  synchronized void judged(OutboxEvent event, Verdict verdict) {
    verdicts[positions.get(event.id())] = verdict;
  }

  /** An event to send, as {@code record}. */
  synchronized void toSend(OutboxEvent event, SourceRecord record) {
    records[positions.get(event.id())] = record;
  }

  /**
   * Splits the events to send into waves; call once, after {@link #judged} and {@link #toSend}.
   *
   * @param oneEventOfAKeyPerWave whether a key's events go one per wave (no transaction per batch)
   */
  synchronized void plan(boolean oneEventOfAKeyPerWave) {
    List<Integer> sending = new ArrayList<>();
    for (int i = 0; i < records.length; i++) {
      if (records[i] != null) {
        sending.add(i);
      }
    }
    List<List<Integer>> inSending;
    if (oneEventOfAKeyPerWave) {
      inSending = KeyOrder.oneEventOfAKeyPerWave(sending.stream().map(events::get).toList());
    } else {
      List<Integer> all = new ArrayList<>();
      for (int i = 0; i < sending.size(); i++) {
        all.add(i);
      }
      inSending = all.isEmpty() ? List.of() : List.of(all);
    }
    List<List<Integer>> out = new ArrayList<>(inSending.size());
    for (List<Integer> w : inSending) {
      out.add(w.stream().map(sending::get).toList());
    }
    this.waves = out;
  }

  /** Whether the last wave handed out is answered and another is still to go. */
  synchronized boolean nextWaveDue() {
    return unanswered == 0 && wave < waves.size() - 1;
  }

  /**
   * The records of the next wave, leaving out the events held back behind a failed event of their
   * key (their verdict: held back, released); skips waves left empty by that. Empty once every wave
   * was handed out.
   */
  synchronized List<SourceRecord> nextWave() {
    List<SourceRecord> out = new ArrayList<>();
    while (out.isEmpty() && unanswered == 0 && wave < waves.size() - 1) {
      wave++;
      for (int i : waves.get(wave)) {
        if (held.holds(events.get(i))) {
          verdicts[i] = KeyOrder.Held.heldBack();
        } else {
          out.add(records[i]);
          handedOut[i] = true;
          unanswered++;
        }
      }
    }
    return out;
  }

  /**
   * Stopping: the waves not handed out yet are not sent; their events are released (claimed again,
   * no attempt counted), so the batch completes once the worker answered what it holds.
   */
  synchronized void giveUpTheRemainingWaves() {
    while (wave < waves.size() - 1) {
      wave++;
      for (int i : waves.get(wave)) {
        verdicts[i] = Verdict.unavailable("the task stopped before sending it");
      }
    }
  }

  /** The broker acknowledged the event's record. */
  synchronized void published(long id) {
    answer(id, Verdict.published());
  }

  /**
   * The worker gave the record up without producing it: a retryable failure of the event, counted
   * toward {@code max-attempts} like a failed publish of the daemon.
   */
  synchronized void failed(long id, String error) {
    answer(id, Verdict.retryable(error));
  }

  private void answer(long id, Verdict verdict) {
    Integer i = positions.get(id);
    if (i == null || !handedOut[i] || verdicts[i] != null) {
      return;
    }
    verdicts[i] = verdict;
    held.record(events.get(i), verdict);
    unanswered--;
  }

  /** A dead letter's copy ({@code dead-letter.destination}) is sent: it waits for its ack. */
  synchronized void copySent(long id) {
    copiesWaiting.add(id);
  }

  /** The worker acknowledged (or gave up) a dead letter's copy. */
  synchronized void copyDone(long id) {
    copiesWaiting.remove(id);
  }

  /** Whether every event has its verdict (every wave handed out and answered). */
  synchronized boolean answered() {
    return unanswered == 0 && wave >= waves.size() - 1;
  }

  /**
   * The settlements, planned once every event has its verdict; the dead letters among them become
   * the copies still to send ({@link #takeUncopiedDeadLetters()}).
   */
  synchronized List<Settlement> settlements(SettlementPlanner planner) {
    if (settlements == null) {
      settlements = planner.plan(events, List.of(verdicts)).settlements();
      for (Settlement s : settlements) {
        if (s instanceof Settlement.DeadLetter dl) {
          uncopied.add(dl);
        }
      }
    }
    return settlements;
  }

  /** Whether some dead letters' copies are still to be sent (after {@link #settlements}). */
  synchronized boolean hasUncopiedDeadLetters() {
    return !uncopied.isEmpty();
  }

  /**
   * The dead letters whose copies are still to be sent before the batch is settled, once: their
   * copies are being sent.
   */
  synchronized List<Settlement.DeadLetter> takeUncopiedDeadLetters() {
    List<Settlement.DeadLetter> out = List.copyOf(uncopied);
    uncopied.clear();
    return out;
  }

  /** Whether every event has its verdict and every dead letter's copy its acknowledgement. */
  synchronized boolean complete() {
    return answered() && copiesWaiting.isEmpty();
  }

  synchronized int size() {
    return events.size();
  }
}
