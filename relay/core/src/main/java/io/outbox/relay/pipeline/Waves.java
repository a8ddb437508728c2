package io.outbox.relay.pipeline;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.OutboxEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Splits a batch into waves that are published one after the other, so that a failing event holds
 * back its key's later events even when they go to another destination.
 *
 * <p>A key's consecutive events for one destination share a wave: the broker keeps their order (one
 * Kafka partition, one RabbitMQ exchange and channel). When a key's next event goes elsewhere, it
 * moves to the next wave, published only once the earlier wave was acknowledged. A batch whose keys
 * each keep to one destination (the usual case) is a single wave.
 */
final class Waves {
  private Waves() {}

  /**
   * @param events the batch, in id order
   * @param destinations each event's destination ({@code null} when it has none)
   * @return positions into {@code events}, per wave, each in id order
   */
  static List<List<Integer>> of(List<OutboxEvent> events, String[] destinations) {
    if (oneDestination(destinations, events.size())) {
      // The usual case: no key can change destination, so the batch is one wave, in order. Skips
      // a map lookup per event (hashing both strings of its key).
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
              : Objects.equals(previous.destination(), destinations[i])
                  ? previous.wave()
                  : previous.wave() + 1;
      last.put(events.get(i).key(), new Last(wave, destinations[i]));
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

  private record Last(int wave, String destination) {}
}
