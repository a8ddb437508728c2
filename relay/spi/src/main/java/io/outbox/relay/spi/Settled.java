package io.outbox.relay.spi;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What {@link Claim#settle} recorded where it differs from the settlements it was given: dead
 * letters the dead-letter table did not take (a missing grant, a constraint, a timeout) stay in the
 * outbox as retries, so that the rest of the batch is still recorded.
 *
 * @param deadLettersKept per dead letter that stayed in the outbox, the retry recorded instead (its
 *     {@code error} is the {@code last_error} written, naming the move's failure)
 */
public record Settled(List<Settlement.Retry> deadLettersKept) {

  /** Everything was recorded as given. */
  public static final Settled AS_GIVEN = new Settled(List.of());

  public Settled {
    deadLettersKept = List.copyOf(Objects.requireNonNull(deadLettersKept, "deadLettersKept"));
  }

  /**
   * The outcome of a settle that kept some dead letters as retries.
   *
   * @param settlements the settlements given
   * @param errors by event id, the {@code last_error} written for each dead letter kept
   * @param delay when the kept dead letters are due again
   */
  public static Settled deadLettersKept(
      List<Settlement> settlements, Map<Long, String> errors, Duration delay) {
    if (errors.isEmpty()) {
      return AS_GIVEN;
    }
    List<Settlement.Retry> kept = new ArrayList<>();
    for (Settlement s : settlements) {
      String error = errors.get(s.event().id());
      if (error != null && s instanceof Settlement.DeadLetter d) {
        kept.add(new Settlement.Retry(d.event(), d.attempts(), delay, error));
      }
    }
    return new Settled(kept);
  }

  /** {@code settlements} with each dead letter kept replaced by its retry. */
  public List<Settlement> applyTo(List<Settlement> settlements) {
    if (deadLettersKept.isEmpty()) {
      return settlements;
    }
    Map<Long, Settlement.Retry> byId = new HashMap<>();
    deadLettersKept.forEach(r -> byId.put(r.event().id(), r));
    List<Settlement> applied = new ArrayList<>(settlements.size());
    for (Settlement s : settlements) {
      applied.add(byId.containsKey(s.event().id()) ? byId.get(s.event().id()) : s);
    }
    return applied;
  }
}
