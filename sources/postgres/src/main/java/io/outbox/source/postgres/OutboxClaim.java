package io.outbox.source.postgres;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.SourceException;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What the claims of the sources that settle in the outbox table (polling and CDC) share: the
 * lane's events, the one end a claim has ({@link #end}), the settlements sorted into a batch of
 * verdicts ({@link #verdicts}), and the message of a batch that could not be recorded. Like {@link
 * ClaimVerdicts} it needs {@code outbox-relay-spi}, which the sources have.
 */
public abstract class OutboxClaim implements Claim {

  private final String pipeline;
  private final int lane;
  private final List<OutboxEvent> events;
  private final long queryNanos;
  private final AtomicBoolean ended = new AtomicBoolean();

  /**
   * @param queryNanos how long the source's query for the events took ({@link Claim#queryNanos})
   */
  protected OutboxClaim(String pipeline, int lane, List<OutboxEvent> events, long queryNanos) {
    this.pipeline = pipeline;
    this.lane = lane;
    this.events = List.copyOf(events);
    this.queryNanos = queryNanos;
  }

  @Override
  public final List<OutboxEvent> events() {
    return events;
  }

  @Override
  public final long queryNanos() {
    return queryNanos;
  }

  /** The lane that claimed it. */
  public final int lane() {
    return lane;
  }

  /** {@inheritDoc} Without a ledger position ({@link #settle(List, LedgerPosition)}). */
  @Override
  public final Settled settle(List<Settlement> settlements) {
    return settle(settlements, null);
  }

  /**
   * The settlements as one batch of {@code verdicts} ({@link ClaimVerdicts#of}).
   *
   * @throws IllegalArgumentException when they do not fit the claim
   */
  protected final OutboxVerdicts.Batch verdicts(
      OutboxVerdicts verdicts, List<Settlement> settlements) {
    return ClaimVerdicts.of(verdicts, events, settlements);
  }

  /**
   * Marks the claim ended, by {@code settle} or {@code release}.
   *
   * @throws IllegalStateException when it was ended already
   */
  protected final void end() {
    if (!ended.compareAndSet(false, true)) {
      throw new IllegalStateException(
          "pipeline " + pipeline + " lane " + lane + ": this claim was already ended");
    }
  }

  /**
   * The error of a batch of verdicts that could not be recorded.
   *
   * @param table where they were written, or {@code null}
   * @param then what becomes of the events ({@code "claimed again"})
   */
  protected final SourceException recordingFailed(String table, String then, SQLException e) {
    return new SourceException(
        "pipeline "
            + pipeline
            + " lane "
            + lane
            + ": recording the outcome of "
            + events.size()
            + " event(s)"
            + (table != null ? " in " + table : "")
            + " failed, they will be "
            + then
            + ": "
            + e.getMessage(),
        e);
  }
}
