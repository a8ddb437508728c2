package io.outbox.soak;

import java.time.Instant;
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
}
