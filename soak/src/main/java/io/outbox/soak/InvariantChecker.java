package io.outbox.soak;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The soak's one verdict, from what the writers wrote, the rows at the end, what the broker holds
 * and the faults injected (docs/design.md, "Failure classes"): every committed event delivered,
 * none rolled back delivered, first deliveries in per-key order, no delayed event before its due
 * time, no attempt charged to an event that never failed, no dead letter, duplicates identical and
 * within their bound per fault. Pure logic: no I/O.
 */
final class InvariantChecker {

  /** The invariants, as named in reports. */
  static final String LOST = "lost";

  static final String ROLLED_BACK_DELIVERED = "rolled-back-delivered";
  static final String UNKNOWN_DELIVERED = "unknown-delivered";
  static final String KEY_ORDER = "key-order";
  static final String EARLY = "delayed-delivered-early";
  static final String CHARGED = "healthy-charged-attempts";
  static final String DEAD_LETTERED = "dead-lettered";
  static final String DUPLICATE_DIFFERS = "duplicate-differs";
  static final String DUPLICATES_OVER_BOUND = "duplicates-over-bound";
  static final String UNLISTED_DUPLICATE = "exactly-once-unlisted-duplicate";

  static final String BEFORE_FAULTS = "before the first fault";

  private InvariantChecker() {}

  /**
   * Checks one soak.
   *
   * @param written every event the writers inserted, committed or not
   * @param rows the rows of the outbox and the dead-letter table at the end, by event id
   * @param deliveries every message read back, per stream in stream order (a key's messages are in
   *     one stream)
   * @param faults the faults, in injection order
   * @param duplicateBound how many duplicates one fault may cause (what was in flight)
   */
  static Findings check(
      List<WrittenEvent> written,
      Map<UUID, RowState> rows,
      List<Delivery> deliveries,
      List<FaultRecord> faults,
      int duplicateBound) {
    return check(written, rows, deliveries, faults, duplicateBound, null);
  }

  /**
   * Checks one exactly-once soak ({@code sentTwice} not null): a duplicate is allowed only for an
   * event the relays listed as sent twice (a fall-back to at least once they logged); any other one
   * breaks {@link #UNLISTED_DUPLICATE}.
   *
   * @param duplicateBound 0 for an exactly-once soak (the per-fault counts are reported; each
   *     unlisted duplicate is a violation of its own)
   * @param sentTwice the events the relays listed as sent twice; null for an at-least-once soak
   */
  static Findings check(
      List<WrittenEvent> written,
      Map<UUID, RowState> rows,
      List<Delivery> deliveries,
      List<FaultRecord> faults,
      int duplicateBound,
      Set<UUID> sentTwice) {
    Map<UUID, WrittenEvent> byId = new HashMap<>();
    int committed = 0;
    int rolledBack = 0;
    int inDoubt = 0;
    for (WrittenEvent w : written) {
      byId.put(w.id(), w);
      switch (w.outcome()) {
        case COMMITTED -> committed++;
        case ROLLED_BACK -> rolledBack++;
        case IN_DOUBT -> inDoubt++;
      }
    }
    List<Violation> violations = new ArrayList<>();
    Map<UUID, List<Delivery>> copies = new LinkedHashMap<>();
    for (Delivery d : deliveries) {
      copies.computeIfAbsent(d.eventId(), k -> new ArrayList<>()).add(d);
    }

    String lostSummary = checkDelivered(byId, rows, copies, deliveries, violations);
    int lateResends = checkKeyOrder(byId, rows, deliveries, violations);
    checkDueTimes(rows, deliveries, violations);
    int refused = checkAttempts(byId, rows, violations);
    Map<UUID, List<Delivery>> charged = copies;
    int listed = 0;
    if (sentTwice != null) {
      charged = new LinkedHashMap<>();
      for (Map.Entry<UUID, List<Delivery>> e : copies.entrySet()) {
        if (e.getValue().size() > 1 && sentTwice.contains(e.getKey())) {
          listed += e.getValue().size() - 1;
          checkCopiesAlike(e.getKey(), e.getValue(), violations);
        } else {
          charged.put(e.getKey(), e.getValue());
          if (e.getValue().size() > 1) {
            violations.add(
                new Violation(
                    UNLISTED_DUPLICATE,
                    e.getKey()
                        + " read "
                        + e.getValue().size()
                        + " times by read_committed, and no relay listed it as sent twice"));
          }
        }
      }
    }
    List<FaultDuplicates> duplicates =
        checkDuplicates(charged, faults, duplicateBound, violations, sentTwice == null);
    int maxAttempts = rows.values().stream().mapToInt(RowState::attempts).max().orElse(0);
    return new Findings(
        lostSummary,
        committed,
        rolledBack,
        inDoubt,
        copies.size(),
        deliveries.size(),
        refused,
        maxAttempts,
        duplicates,
        lateResends,
        sentTwice == null ? -1 : listed,
        violations);
  }

  /**
   * Lost events (with whether later events of their key arrived: a gap), and unexpected ones.
   *
   * @return one line about the lost events, empty when none was lost
   */
  private static String checkDelivered(
      Map<UUID, WrittenEvent> byId,
      Map<UUID, RowState> rows,
      Map<UUID, List<Delivery>> copies,
      List<Delivery> deliveries,
      List<Violation> violations) {
    Map<String, Long> lastDeliveredRow = new HashMap<>();
    for (Delivery d : deliveries) {
      WrittenEvent w = byId.get(d.eventId());
      RowState row = rows.get(d.eventId());
      if (w != null && row != null) {
        lastDeliveredRow.merge(w.key(), row.rowId(), Math::max);
      }
    }
    List<Lost> lost = new ArrayList<>();
    for (WrittenEvent w : byId.values()) {
      boolean delivered = copies.containsKey(w.id());
      if (w.outcome() == WrittenEvent.Outcome.COMMITTED && !delivered) {
        RowState row = rows.get(w.id());
        String state;
        if (row == null) {
          state = "no row in the outbox or the dead-letter table";
        } else {
          long later = lastDeliveredRow.getOrDefault(w.key(), Long.MIN_VALUE);
          state =
              "row "
                  + row.rowId()
                  + ", "
                  + rowState(row)
                  + ", attempts "
                  + row.attempts()
                  + (later > row.rowId()
                      ? "; a gap: row " + later + " of the key was delivered"
                      : "; at the key's tail");
        }
        lost.add(
            new Lost(
                row == null ? Long.MAX_VALUE : row.rowId(),
                row == null ? "without a row" : shortState(row),
                new Violation(LOST, w.id() + " key " + w.key() + ": " + state)));
      } else if (w.outcome() == WrittenEvent.Outcome.ROLLED_BACK && delivered) {
        violations.add(
            new Violation(
                ROLLED_BACK_DELIVERED,
                w.id() + " key " + w.key() + " delivered " + copies.get(w.id()).size() + "x"));
      }
    }
    lost.sort(Comparator.comparingLong(Lost::rowId));
    lost.forEach(l -> violations.add(l.violation()));
    for (UUID id : copies.keySet()) {
      if (!byId.containsKey(id)) {
        violations.add(
            new Violation(UNKNOWN_DELIVERED, id + " delivered but never written by the soak"));
      }
    }
    return summarize(lost);
  }

  /** A lost event: its row (or none), the row's state in a word or two, the violation. */
  private record Lost(long rowId, String state, Violation violation) {}

  /** {@code 12 committed event(s) not delivered: 12 still unpublished; rows 40 to 97}. */
  private static String summarize(List<Lost> lost) {
    if (lost.isEmpty()) {
      return "";
    }
    Map<String, Long> states =
        lost.stream()
            .collect(Collectors.groupingBy(Lost::state, TreeMap::new, Collectors.counting()));
    List<Long> rowIds = lost.stream().map(Lost::rowId).filter(r -> r != Long.MAX_VALUE).toList();
    return lost.size()
        + " committed event(s) not delivered: "
        + states.entrySet().stream()
            .map(e -> e.getValue() + " " + e.getKey())
            .collect(Collectors.joining(", "))
        + (rowIds.isEmpty()
            ? ""
            : "; rows " + rowIds.get(0) + " to " + rowIds.get(rowIds.size() - 1));
  }

  /**
   * First deliveries of a key follow row order. A delayed event may come after later rows of its
   * key (it is late on purpose); no other event may come after a later row of its key.
   *
   * @return the late re-sends: copies of an event, not its first, that arrived after the first
   *     delivery of a later row of its key (a consumer that applies each copy would see the key go
   *     back; docs/reliability.md says what to do). Counted, not a violation: each is a duplicate
   *     too, bounded per fault.
   */
  private static int checkKeyOrder(
      Map<UUID, WrittenEvent> byId,
      Map<UUID, RowState> rows,
      List<Delivery> deliveries,
      List<Violation> violations) {
    record Last(long rowId, UUID id, Instant at) {}
    Map<String, Last> last = new HashMap<>();
    Set<UUID> seen = new HashSet<>();
    int lateResends = 0;
    for (Delivery d : deliveries) {
      WrittenEvent w = byId.get(d.eventId());
      RowState row = rows.get(d.eventId());
      if (w == null || row == null) {
        continue;
      }
      if (!seen.add(d.eventId())) {
        Last newest = last.get(w.key());
        if (newest != null && newest.rowId() > row.rowId()) {
          lateResends++;
        }
        continue;
      }
      Last before = last.get(w.key());
      if (before != null && before.rowId() > row.rowId() && !w.delayed()) {
        violations.add(
            new Violation(
                KEY_ORDER,
                "key "
                    + w.key()
                    + ": "
                    + w.id()
                    + " (row "
                    + row.rowId()
                    + ") first delivered at "
                    + d.at()
                    + ", "
                    + millis(Duration.between(before.at(), d.at()))
                    + " after "
                    + before.id()
                    + " (row "
                    + before.rowId()
                    + ") at "
                    + before.at()));
      }
      if (before == null || row.rowId() > before.rowId()) {
        last.put(w.key(), new Last(row.rowId(), d.eventId(), d.at()));
      }
    }
    return lateResends;
  }

  /** No copy of an event is sent before its {@code available_at} (to the millisecond). */
  private static void checkDueTimes(
      Map<UUID, RowState> rows, List<Delivery> deliveries, List<Violation> violations) {
    for (Delivery d : deliveries) {
      RowState row = rows.get(d.eventId());
      if (row != null
          && row.availableAt() != null
          && d.at().isBefore(row.availableAt().truncatedTo(ChronoUnit.MILLIS))) {
        violations.add(
            new Violation(
                EARLY,
                d.eventId()
                    + " available at "
                    + row.availableAt()
                    + " delivered at "
                    + d.at()
                    + " ("
                    + millis(Duration.between(d.at(), row.availableAt()))
                    + " early)"));
      }
    }
  }

  /**
   * Attempts only on events refused retryably, no dead letter at all; returns how many of the
   * refused-at-times events were charged attempts.
   */
  private static int checkAttempts(
      Map<UUID, WrittenEvent> byId, Map<UUID, RowState> rows, List<Violation> violations) {
    int refused = 0;
    for (RowState row : rows.values()) {
      WrittenEvent w = byId.get(row.id());
      boolean flaky = w != null && w.flaky();
      if (row.attempts() > 0) {
        if (flaky) {
          refused++;
        } else {
          violations.add(
              new Violation(
                  CHARGED,
                  row.id()
                      + " (row "
                      + row.rowId()
                      + ") attempts "
                      + row.attempts()
                      + ", last error: "
                      + row.lastError()));
        }
      }
      if (row.deadLettered()) {
        violations.add(
            new Violation(
                DEAD_LETTERED,
                row.id()
                    + " (row "
                    + row.rowId()
                    + (flaky ? ", refused retryably at times" : "")
                    + ") reason "
                    + row.deadLetterReason()
                    + ", attempts "
                    + row.attempts()
                    + ", last error: "
                    + row.lastError()));
      }
    }
    return refused;
  }

  /**
   * Duplicates per fault: a repeated event is charged to the fault in progress when its last copy
   * was sent (the re-send), and those before the first fault to no fault (bound 0).
   */
  private static List<FaultDuplicates> checkDuplicates(
      Map<UUID, List<Delivery>> copies,
      List<FaultRecord> faults,
      int bound,
      List<Violation> violations,
      boolean overBoundIsViolation) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    counts.put(BEFORE_FAULTS, 0);
    faults.forEach(f -> counts.put(f.label(), 0));
    for (Map.Entry<UUID, List<Delivery>> e : copies.entrySet()) {
      List<Delivery> all = e.getValue();
      if (all.size() < 2) {
        continue;
      }
      Instant resent = all.stream().map(Delivery::at).max(Instant::compareTo).orElseThrow();
      String window = BEFORE_FAULTS;
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
          int limit = BEFORE_FAULTS.equals(window) ? 0 : bound;
          out.add(new FaultDuplicates(window, n, limit));
          if (n > limit && overBoundIsViolation) {
            violations.add(
                new Violation(
                    DUPLICATES_OVER_BOUND,
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
              DUPLICATE_DIFFERS,
              id + " has " + all.size() + " copies, not all with the same key and body"));
    }
  }

  private static String shortState(RowState row) {
    if (row.deadLettered()) {
      return "dead-lettered";
    }
    return row.publishedAt() != null ? "marked published, not on the broker" : "still unpublished";
  }

  private static String rowState(RowState row) {
    if (row.deadLettered()) {
      return "dead-lettered (" + row.deadLetterReason() + ")";
    }
    return row.publishedAt() != null
        ? "marked published at " + row.publishedAt() + " but not on the broker"
        : "still unpublished";
  }

  private static String millis(Duration d) {
    return d.toMillis() + " ms";
  }

  /** One broken invariant, with the event ids that show it. */
  record Violation(String invariant, String detail) {}

  /** Duplicates charged to one fault (or to none, before the first). */
  record FaultDuplicates(String fault, int duplicates, int bound) {}

  /**
   * What the check found.
   *
   * @param lostSummary one line about the lost events, empty when none was lost
   * @param committed events whose transaction committed
   * @param rolledBack events whose transaction rolled back
   * @param inDoubt events whose commit failed without an answer (not checked either way)
   * @param delivered distinct events read back
   * @param messages messages read back, duplicates included
   * @param refusedRetryably events of the refusing destination that were charged attempts
   * @param maxAttempts the most attempts on any row
   * @param duplicates duplicates per fault, with their bound
   * @param lateResends duplicates that arrived after the first delivery of a later event of their
   *     key (counted among the duplicates too)
   * @param sentTwice in an exactly-once soak, the duplicates of events the relays listed as sent
   *     twice (not among {@code duplicates}); -1 in an at-least-once soak
   * @param violations every broken invariant
   */
  record Findings(
      String lostSummary,
      int committed,
      int rolledBack,
      int inDoubt,
      int delivered,
      int messages,
      int refusedRetryably,
      int maxAttempts,
      List<FaultDuplicates> duplicates,
      int lateResends,
      int sentTwice,
      List<Violation> violations) {

    int duplicateCount() {
      return duplicates.stream().mapToInt(FaultDuplicates::duplicates).sum();
    }
  }
}
