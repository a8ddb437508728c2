package io.outbox.soak;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The soak's one verdict, from what the writers wrote, the rows at the end, what the broker holds
 * and the faults injected (docs/design.md, "Failure classes"): every committed event delivered,
 * none rolled back delivered, first deliveries in per-key order, no delayed event before its due
 * time, no attempt charged to an event that never failed, no dead letter, duplicates identical and
 * within their bound per fault. Pure logic: no I/O. The delivery invariants are {@link
 * LostEvents}', the duplicates' {@link DuplicateCharges}'.
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

    String lostSummary = LostEvents.check(byId, rows, copies, deliveries, violations);
    int lateResends = checkKeyOrder(byId, rows, deliveries, violations);
    checkDueTimes(rows, deliveries, violations);
    int refused = checkAttempts(byId, rows, violations);
    DuplicateCharges.SetApart exactlyOnce =
        sentTwice == null ? null : DuplicateCharges.setApartListed(copies, sentTwice, violations);
    List<FaultDuplicates> duplicates =
        DuplicateCharges.perFault(
            exactlyOnce == null ? copies : exactlyOnce.charged(),
            faults,
            duplicateBound,
            violations,
            sentTwice == null);
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
        exactlyOnce == null ? -1 : exactlyOnce.listed(),
        violations);
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
