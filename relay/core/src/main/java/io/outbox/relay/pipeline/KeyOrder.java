package io.outbox.relay.pipeline;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Verdict;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The pipeline's one owner of per-key order within a claimed batch (docs/design.md, "Lanes and
 * per-key order"): which events go to the sink together ({@link #waves}), and which are held back
 * behind a failed event of their key ({@link Held}), for both publishers and the settlement
 * planner. At the sink, {@link io.outbox.relay.spi.support.PendingBatch} decides within a sink's
 * batch; at the source, the claim (polling: SQL; CDC: its lanes) decides what is claimed.
 *
 * <p><b>Waves.</b> A batch is split into waves that are published one after the other, so that a
 * failing event holds back its key's later events even when they go to another destination, or when
 * the broker may refuse it alone.
 *
 * <p>A key's consecutive events for one destination share a wave: the broker keeps their order (one
 * Kafka partition, one RabbitMQ exchange and channel). When a key's next event goes elsewhere, it
 * moves to the next wave, published only once the earlier wave was acknowledged.
 *
 * <p>A key's event that follows a <em>retry</em> (an event with attempts already counted) also
 * moves to the next wave. Within one destination the broker keeps a key's order only while it
 * accepts every record: a per-record refusal (Kafka answering {@code INVALID_RECORD} for one
 * request) does not stop the next request of the partition, already in flight, from being appended,
 * so a later event of the key would be delivered before the refused one. An event that failed
 * before is the one most likely to fail again; sending its key's later events only after it was
 * acknowledged keeps them behind it, at the cost of one round trip for that key only.
 *
 * <p>A batch whose keys each keep to one destination and that holds no retry (the usual case) is a
 * single wave.
 *
 * <p>Where the relay does not own the producer (the Kafka Connect connector: the worker's producer
 * sends what the task hands it, and appends a key's next request after refusing one record), a key
 * has one event per wave ({@link #oneEventOfAKeyPerWave}): its next event goes to the broker only
 * once the previous one was acknowledged.
 */
public final class KeyOrder {
  private KeyOrder() {}

  /**
   * The keys held back within one batch: a retryable or sink-unavailable verdict ({@link
   * Verdict#holdsBackItsKey}) holds back every later event of its key; a published or permanent one
   * holds nothing. Not thread-safe: one per batch, on the lane's thread.
   */
  public static final class Held {
    private final Set<AggregateKey> keys = new HashSet<>();

    /** Records {@code event}'s verdict: one that holds back its key holds it from now on. */
    public void record(OutboxEvent event, Verdict verdict) {
      if (verdict.holdsBackItsKey()) {
        keys.add(event.key());
      }
    }

    /** Whether an earlier event of {@code event}'s key failed: it must not be published. */
    public boolean holds(OutboxEvent event) {
      return !keys.isEmpty() && keys.contains(event.key());
    }

    /** The verdict of an event held back: released, no attempt counted. */
    public static Verdict heldBack() {
      return Verdict.unavailable("held back behind a failed event of its key");
    }
  }

  /**
   * @param events the batch, in id order
   * @param destinations each event's destination ({@code null} when it has none)
   * @return positions into {@code events}, per wave, each in id order
   */
  static List<List<Integer>> waves(List<OutboxEvent> events, String[] destinations) {
    if (oneDestination(destinations, events.size()) && noRetry(events)) {
      // The usual case: no key can change destination nor follow a retry, so the batch is one
      // wave, in order. Skips a map lookup per event (hashing both strings of its key).
      List<Integer> all = new ArrayList<>(events.size());
      for (int i = 0; i < events.size(); i++) {
        all.add(i);
      }
      return all.isEmpty() ? List.of() : List.of(all);
    }
    // Per key: the wave and destination of its latest event in the batch.
    Map<AggregateKey, Last> last = new HashMap<>();
    List<List<Integer>> waves = new ArrayList<>();
    for (int i = 0; i < events.size(); i++) {
      Last previous = last.get(events.get(i).key());
      int wave =
          previous == null
              ? 0
              : Objects.equals(previous.destination(), destinations[i]) && !previous.retry()
                  ? previous.wave()
                  : previous.wave() + 1;
      last.put(events.get(i).key(), new Last(wave, destinations[i], events.get(i).attempts() > 0));
      while (waves.size() <= wave) {
        waves.add(new ArrayList<>());
      }
      waves.get(wave).add(i);
    }
    return waves;
  }

  /**
   * Waves in which each key has one event: a key's i-th event of the batch goes in wave i, after
   * its previous event was acknowledged, whatever its destination. A key's later events are never
   * in flight with an earlier one, so a broker that refuses the earlier one cannot take them first.
   * Costs one round trip per event of the key with the most events in the batch.
   *
   * @param events the batch, in id order
   * @return positions into {@code events}, per wave, each in id order
   */
  public static List<List<Integer>> oneEventOfAKeyPerWave(List<OutboxEvent> events) {
    Map<AggregateKey, Integer> seen = new HashMap<>();
    List<List<Integer>> waves = new ArrayList<>();
    for (int i = 0; i < events.size(); i++) {
      int wave = seen.merge(events.get(i).key(), 1, Integer::sum) - 1;
      while (waves.size() <= wave) {
        waves.add(new ArrayList<>());
      }
      waves.get(wave).add(i);
    }
    return waves;
  }

  private static boolean oneDestination(String[] destinations, int size) {
    for (int i = 1; i < size; i++) {
      if (!Objects.equals(destinations[i], destinations[0])) {
        return false;
      }
    }
    return true;
  }

  private static boolean noRetry(List<OutboxEvent> events) {
    for (OutboxEvent e : events) {
      if (e.attempts() > 0) {
        return false;
      }
    }
    return true;
  }

  private record Last(int wave, String destination, boolean retry) {}
}
