package io.outbox.source.postgres;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * The verdicts of a claim ({@link Settlement}s) as one {@link OutboxVerdicts.Batch}, for the
 * sources that settle in the outbox table (polling and CDC). It needs {@code outbox-relay-spi}, an
 * optional dependency of this module: the sources have it, applications that only write events do
 * not.
 */
public final class ClaimVerdicts {

  private ClaimVerdicts() {}

  /**
   * Sorts the settlements of a claim of {@code events} into a batch of {@code verdicts}: published
   * rows, retries and dead letters; an event without a settlement, or released, records nothing.
   *
   * @throws IllegalArgumentException when a settlement is for an event that is not in {@code
   *     events}, or a second one for an event ({@link Settlement#requireOnePerEvent}): the claim
   *     then releases all its events
   */
  public static OutboxVerdicts.Batch of(
      OutboxVerdicts verdicts, List<OutboxEvent> events, List<Settlement> settlements) {
    return of(verdicts, events, settlements, id -> false);
  }

  /**
   * As {@link #of(OutboxVerdicts, List, List)}, leaving out the published rows that {@code
   * settledByPosition} names: settlement by position settles them without a write.
   */
  public static OutboxVerdicts.Batch of(
      OutboxVerdicts verdicts,
      List<OutboxEvent> events,
      List<Settlement> settlements,
      LongPredicate settledByPosition) {
    Settlement.requireOnePerEvent(events, settlements);
    OutboxVerdicts.Batch batch = verdicts.batch();
    for (Settlement s : settlements) {
      long id = s.event().id();
      if (s instanceof Settlement.Published) {
        if (!settledByPosition.test(id)) {
          batch.published(id);
        }
      } else if (s instanceof Settlement.Retry r) {
        batch.retry(id, r.attempts(), r.delay().toMillis(), r.error());
      } else if (s instanceof Settlement.DeadLetter d) {
        batch.deadLetter(id, d.reason().columnValue(), d.attempts(), d.error());
      }
    }
    return batch;
  }
}
