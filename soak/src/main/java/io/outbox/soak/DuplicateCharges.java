package io.outbox.soak;

import io.outbox.soak.InvariantChecker.FaultDuplicates;
import io.outbox.soak.InvariantChecker.Violation;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The soak's duplicate invariants: the copies of an event are alike ({@link
 * InvariantChecker#DUPLICATE_DIFFERS}); each duplicate is charged to a fault, within its bound
 * ({@link InvariantChecker#DUPLICATES_OVER_BOUND}); in an exactly-once soak, only the events the
 * relays listed as sent twice may have any ({@link InvariantChecker#UNLISTED_DUPLICATE}). Pure
 * logic: no I/O.
 */
final class DuplicateCharges {

  private DuplicateCharges() {}

  /**
   * The copies left to charge to faults in an exactly-once soak, and how many duplicates the relays
   * listed.
   */
  record SetApart(Map<UUID, List<Delivery>> charged, int listed) {}

  /**
   * Sets apart the events {@code sentTwice} lists (their copies still alike); every other event
   * read more than once breaks {@link InvariantChecker#UNLISTED_DUPLICATE}.
   */
  static SetApart setApartListed(
      Map<UUID, List<Delivery>> copies, Set<UUID> sentTwice, List<Violation> violations) {
    Map<UUID, List<Delivery>> charged = new LinkedHashMap<>();
    int listed = 0;
    for (Map.Entry<UUID, List<Delivery>> e : copies.entrySet()) {
      if (e.getValue().size() > 1 && sentTwice.contains(e.getKey())) {
        listed += e.getValue().size() - 1;
        checkCopiesAlike(e.getKey(), e.getValue(), violations);
      } else {
        charged.put(e.getKey(), e.getValue());
        if (e.getValue().size() > 1) {
          violations.add(
              new Violation(
                  InvariantChecker.UNLISTED_DUPLICATE,
                  e.getKey()
                      + " read "
                      + e.getValue().size()
                      + " times by read_committed, and no relay listed it as sent twice"));
        }
      }
    }
    return new SetApart(charged, listed);
  }

  /**
   * Duplicates per fault: a repeated event is charged to the fault in progress when its last copy
   * was sent (the re-send), and those before the first fault to no fault (bound 0).
   */
  static List<FaultDuplicates> perFault(
      Map<UUID, List<Delivery>> copies,
      List<FaultRecord> faults,
      int bound,
      List<Violation> violations,
      boolean overBoundIsViolation) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    counts.put(InvariantChecker.BEFORE_FAULTS, 0);
    faults.forEach(f -> counts.put(f.label(), 0));
    for (Map.Entry<UUID, List<Delivery>> e : copies.entrySet()) {
      List<Delivery> all = e.getValue();
      if (all.size() < 2) {
        continue;
      }
      Instant resent = all.stream().map(Delivery::at).max(Instant::compareTo).orElseThrow();
      String window = InvariantChecker.BEFORE_FAULTS;
      for (FaultRecord f : faults) {
        if (!f.start().isAfter(resent)) {
          window = f.label();
        }
      }
      counts.merge(window, all.size() - 1, Integer::sum);
      checkCopiesAlike(e.getKey(), all, violations);
    }
    List<FaultDuplicates> out = new ArrayList<>();
    counts.forEach(
        (window, n) -> {
          int limit = InvariantChecker.BEFORE_FAULTS.equals(window) ? 0 : bound;
          out.add(new FaultDuplicates(window, n, limit));
          if (n > limit && overBoundIsViolation) {
            violations.add(
                new Violation(
                    InvariantChecker.DUPLICATES_OVER_BOUND,
                    n + " duplicate(s) charged to " + window + ", bound " + limit));
          }
        });
    return out;
  }

  private static void checkCopiesAlike(UUID id, List<Delivery> all, List<Violation> violations) {
    int first = all.get(0).fingerprint();
    if (all.stream().anyMatch(c -> c.fingerprint() != first)) {
      violations.add(
          new Violation(
              InvariantChecker.DUPLICATE_DIFFERS,
              id + " has " + all.size() + " copies, not all with the same key and body"));
    }
  }
}
