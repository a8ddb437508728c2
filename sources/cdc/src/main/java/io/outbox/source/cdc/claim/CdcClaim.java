package io.outbox.source.cdc.claim;

import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.source.cdc.stream.ChangeStream;
import io.outbox.source.postgres.ClaimVerdicts;
import io.outbox.source.postgres.OutboxClaim;
import io.outbox.source.postgres.OutboxVerdicts;
import java.sql.SQLException;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * A claim of the CDC source: events taken from a lane's buffer whose rows still say they are to be
 * sent ({@link CurrentRows}). {@link #settle} writes the verdicts to the outbox in one transaction
 * (the same statements as the polling source), then lets the stream free their positions, hold
 * retries back, and take released events again.
 */
final class CdcClaim extends OutboxClaim {

  /** Where a claim writes its verdicts. */
  interface Writer {
    /**
     * Writes the verdicts in one transaction, and with them, when {@code position} is not {@code
     * null}, advances the ledger watermark of its partition to it.
     *
     * @return what was written (dead letters the move could not take are kept as retries)
     * @throws SQLException when the database fails; nothing was recorded
     */
    OutboxVerdicts.Written write(OutboxVerdicts.Batch verdicts, LedgerPosition position)
        throws SQLException;

    OutboxVerdicts verdicts();

    String pipeline();

    /** Whether this instance still holds the pipeline's lease (no I/O). */
    boolean owned();
  }

  private final Writer writer;
  private final ChangeStream<?> stream;
  private final List<ChangeStream.Item> items;
  private final IntConsumer ended;

  /**
   * @param queryNanos how long reading the events' rows took ({@link CurrentRows})
   */
  CdcClaim(
      Writer writer,
      ChangeStream<?> stream,
      int lane,
      List<ChangeStream.Item> items,
      long queryNanos,
      IntConsumer ended) {
    super(
        writer.pipeline(), lane, items.stream().map(ChangeStream.Item::event).toList(), queryNanos);
    this.writer = writer;
    this.stream = stream;
    this.items = List.copyOf(items);
    this.ended = ended;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Events without a settlement go back to the front of their lane in memory. Settlements that
   * do not fit the claim ({@link ClaimVerdicts#of}) give all its events back that way and throw.
   * The watermark is advanced in the verdicts' transaction, so that a batch settled here is never
   * settled again from the ledger, and one the ledger settles is dropped when the stream delivers
   * it again.
   */
  @Override
  public Settled settle(List<Settlement> settlements, LedgerPosition position) {
    end();
    try {
      Settled settled = Settled.AS_GIVEN;
      OutboxVerdicts.Batch batch;
      try {
        batch = verdicts(writer.verdicts(), settlements);
      } catch (IllegalArgumentException e) {
        stream.released(lane(), items);
        throw e;
      }
      if (!batch.isEmpty() || position != null) {
        try {
          OutboxVerdicts.Written written = writer.write(batch, position);
          settled =
              Settled.deadLettersKept(
                  settlements, written.keptErrors(), OutboxVerdicts.KEPT_RETRY_DELAY);
        } catch (SQLException e) {
          stream.released(lane(), items);
          throw recordingFailed(writer.verdicts().table(), "published again", e);
        }
      }
      // A dead letter kept in the outbox is held back like any retry, and re-streamed when due.
      stream.settled(lane(), items, settled.applyTo(settlements));
      return settled;
    } finally {
      ended.accept(lane());
    }
  }

  @Override
  public boolean owned() {
    return writer.owned();
  }

  @Override
  public void release() {
    end();
    try {
      stream.released(lane(), items);
    } finally {
      ended.accept(lane());
    }
  }
}
