package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The tally of {@link SinkContract}'s refusing-broker case: per batch, each key's first refusal,
 * and every event of that key behind it that was published anyway, or (read back from a broker that
 * keeps what it took) that the broker took. Events are told apart by their {@link NumberedEvents
 * number}.
 */
final class RefusalOrder {

  private int refused;
  private int published;
  private int delivered = -1;
  private final List<String> violations = new ArrayList<>();
  private final Map<Integer, String> behindARefusal = new HashMap<>(); // event number -> why

  /** Tallies the verdicts of one batch ({@code name} in violations), published in one go. */
  void judge(String name, List<RoutedEvent> batch, List<Verdict> verdicts) {
    Map<String, Integer> firstRefusal = new HashMap<>();
    for (int i = 0; i < batch.size(); i++) {
      String key = batch.get(i).event().aggregateId();
      Outcome outcome = verdicts.get(i).outcome();
      Integer earlier = firstRefusal.get(key);
      String behind =
          earlier == null
              ? null
              : name
                  + ", "
                  + key
                  + ": event #"
                  + i
                  + " {what} although #"
                  + earlier
                  + " was refused ("
                  + verdicts.get(earlier).error()
                  + ")";
      if (behind != null) {
        behindARefusal.put(
            NumberedEvents.number(batch.get(i).event().payload()),
            behind.replace("{what}", "reached the broker"));
      }
      if (outcome == Outcome.RETRYABLE || outcome == Outcome.SINK_UNAVAILABLE) {
        refused++;
        firstRefusal.putIfAbsent(key, i);
      } else if (outcome == Outcome.PUBLISHED) {
        published++;
        if (behind != null) {
          violations.add(behind.replace("{what}", "published"));
        }
      }
    }
  }

  /** Whether the broker refused some events and took more than {@code capacity} so far. */
  boolean refusedAndTookMore(int capacity) {
    return refused > 0 && published > capacity;
  }

  /** What the broker took, as a consumer reads it: none of it may be behind a refusal. */
  void taken(List<Delivered> all) {
    delivered = all.size();
    for (Delivered d : all) {
      String why = behindARefusal.get(NumberedEvents.number(d.body()));
      if (why != null) {
        violations.add(why);
      }
    }
  }

  /**
   * Prints the tally; asserts that the broker refused some events, took more than {@code capacity}
   * (so took some after refusing), and that nothing was published or taken behind a refusal.
   */
  void assertHeldBack(String suite, int capacity) {
    System.out.printf(
        "%s: %d published, %d refused or held back, %d read back, %d out of key order%n",
        suite, published, refused, delivered, violations.size());
    assertThat(refused).as("events refused: the broker must have been full").isPositive();
    assertThat(published)
        .as("events published: more than the destination holds, so it took some after refusing")
        .isGreaterThan(capacity);
    assertThat(violations)
        .as("events published, or taken by the broker, behind a refused event of their key")
        .isEmpty();
  }
}
