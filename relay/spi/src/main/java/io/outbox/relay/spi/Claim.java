package io.outbox.relay.spi;

import java.util.List;

/**
 * A batch of events taken by one lane. Exactly one of {@link #settle} or {@link #release} ends it;
 * until then no other claim returns these events.
 *
 * <p>If the process dies before the claim ends, its events are simply claimed again later (at least
 * once).
 */
public interface Claim {

  /** The events, in {@code id} order. */
  List<OutboxEvent> events();

  /**
   * Makes the outcome of every event durable, atomically: published rows are marked or deleted,
   * retries recorded, dead letters moved, and the rest released.
   *
   * <p>A dead letter the source cannot move (the dead-letter table refuses it) does not fail the
   * others: it is recorded as a retry instead and returned in {@link Settled#deadLettersKept()}.
   *
   * @param settlements one per event of {@link #events()}, in any order
   * @return what was recorded differently from {@code settlements}; {@link Settled#AS_GIVEN} when
   *     nothing
   * @throws SourceException when the database fails; the events are then claimed again later
   */
  Settled settle(List<Settlement> settlements);

  /**
   * {@link #settle(List)}, and in the same database transaction advances the ledger watermark of
   * {@code position}'s partition to it ({@link LedgerWatermark}): the settlement of a batch an
   * exactly-once sink committed with its ledger record at {@code position}.
   *
   * @throws UnsupportedOperationException when the source keeps no ledger watermark (the default)
   */
  default Settled settle(List<Settlement> settlements, LedgerPosition position) {
    throw new UnsupportedOperationException("this source keeps no ledger watermark");
  }

  /**
   * The claim's identity for the ledger and diagnostics (e.g. the epoch it was made under); empty
   * by default.
   */
  default String identity() {
    return "";
  }

  /** Ends the claim without recording anything: the events will be claimed again. */
  void release();

  /**
   * Whether this instance may still publish the claim's events: {@code false} once the source knows
   * that its active role is lost, or that its lease ran out (a process that was frozen wakes up to
   * {@code false}), so another instance may already publish the same keys. The pipeline checks it
   * right before it hands events to the sink, and releases a claim no longer owned unpublished.
   * Cheap (no I/O). The default is {@code true}.
   */
  default boolean owned() {
    return true;
  }

  /**
   * How long the source's query for these events took, in nanoseconds, not counting any wait for
   * rows to arrive (the pipeline's {@code claim} stage metric); {@code -1}, the default, when the
   * source does not measure it.
   */
  default long queryNanos() {
    return -1;
  }

  /**
   * The claim a source returns when nothing was available: it holds no event, and may be ended any
   * number of times.
   */
  static Claim empty() {
    return EmptyClaim.INSTANCE;
  }
}
