package io.outbox.relay.spi;

import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * What a transaction of a {@link TransactionalSink} records about itself in the ledger: the events
 * it published and which claim they came from.
 *
 * @param lane the lane that published
 * @param claim the claim's identity (source-defined, e.g. the epoch), for diagnostics
 * @param events the events the transaction published (not the dead-letter copies)
 */
public record LedgerRecord(int lane, String claim, List<Event> events) {

  public LedgerRecord {
    Objects.requireNonNull(claim, "claim");
    events = List.copyOf(events);
  }

  /**
   * One published event: the row id and its event id, which must both match for the row to be
   * settled (a row with a reused id is never touched).
   */
  public record Event(long id, UUID eventId) {
    public Event {
      Objects.requireNonNull(eventId, "eventId");
    }

    /** The ledger's entry for {@code event}. */
    public static Event of(OutboxEvent event) {
      return new Event(event.id(), event.eventId());
    }
  }
}
