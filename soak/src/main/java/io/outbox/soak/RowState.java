package io.outbox.soak;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * An event's row at the end of a soak, in the outbox or the dead-letter table.
 *
 * @param id the event id
 * @param rowId the row's {@code id} (insertion order)
 * @param attempts failed delivery attempts charged to it
 * @param availableAt not to be published before this
 * @param publishedAt when the relay marked it published, or {@code null}
 * @param deadLetterReason {@code max-attempts} or {@code permanent} when dead-lettered, else {@code
 *     null}
 * @param lastError the last failure recorded, or {@code null}
 */
record RowState(
    UUID id,
    long rowId,
    int attempts,
    Instant availableAt,
    Instant publishedAt,
    String deadLetterReason,
    String lastError) {

  boolean deadLettered() {
    return deadLetterReason != null;
  }

  /**
   * {@code rows} with a row for each committed event whose row retention removed (settled and old
   * enough: deleted, or its partition emptied), made from what its writer recorded: the row id and
   * the due time, so that key order and due times are checked for it as for the others. Its
   * attempts are unknown (0): what it was charged is not checked.
   */
  static Map<UUID, RowState> withRemovedRows(Map<UUID, RowState> rows, List<WrittenEvent> written) {
    Map<UUID, RowState> all = new HashMap<>(rows);
    for (WrittenEvent w : written) {
      if (w.outcome() == WrittenEvent.Outcome.COMMITTED && w.rowId() > 0) {
        all.putIfAbsent(w.id(), new RowState(w.id(), w.rowId(), 0, w.dueAt(), null, null, null));
      }
    }
    return all;
  }
}
