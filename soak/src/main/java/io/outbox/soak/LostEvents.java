package io.outbox.soak;

import io.outbox.soak.InvariantChecker.Violation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The soak's delivery invariants: every committed event arrived ({@link InvariantChecker#LOST},
 * each lost one with its row's state and whether later events of its key arrived: a gap), no
 * rolled-back one did ({@link InvariantChecker#ROLLED_BACK_DELIVERED}), nor one the soak never
 * wrote ({@link InvariantChecker#UNKNOWN_DELIVERED}). Pure logic: no I/O.
 */
final class LostEvents {

  private LostEvents() {}

  /**
   * Adds the violations to {@code violations}, the lost events in row order.
   *
   * @param copies every copy read back, by event id
   * @return one line about the lost events, empty when none was lost
   */
  static String check(
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
                new Violation(InvariantChecker.LOST, w.id() + " key " + w.key() + ": " + state)));
      } else if (w.outcome() == WrittenEvent.Outcome.ROLLED_BACK && delivered) {
        violations.add(
            new Violation(
                InvariantChecker.ROLLED_BACK_DELIVERED,
                w.id() + " key " + w.key() + " delivered " + copies.get(w.id()).size() + "x"));
      }
    }
    lost.sort(Comparator.comparingLong(Lost::rowId));
    lost.forEach(l -> violations.add(l.violation()));
    for (UUID id : copies.keySet()) {
      if (!byId.containsKey(id)) {
        violations.add(
            new Violation(
                InvariantChecker.UNKNOWN_DELIVERED,
                id + " delivered but never written by the soak"));
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
}
