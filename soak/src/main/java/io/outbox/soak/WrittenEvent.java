package io.outbox.soak;

import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * An event a soak writer inserted, and what became of its transaction.
 *
 * @param id the event id
 * @param rowId its row's {@code id}, read in its transaction before the commit; 0 when unknown
 * @param key the ordering key, {@code <aggregate_type>/<aggregate_id>}
 * @param outcome whether the transaction committed
 * @param dueAt the {@code available_at} the writer set for a delayed event, or {@code null}
 * @param flaky whether the event goes to the destination that refuses it retryably at times
 */
record WrittenEvent(
    UUID id, long rowId, String key, Outcome outcome, Instant dueAt, boolean flaky) {

  /** The end of the writer's transaction. */
  enum Outcome {
    COMMITTED,
    ROLLED_BACK,
    /** The commit failed without saying whether it happened (a lost connection). */
    IN_DOUBT
  }

  WrittenEvent {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(outcome, "outcome");
  }

  boolean delayed() {
    return dueAt != null;
  }
}
