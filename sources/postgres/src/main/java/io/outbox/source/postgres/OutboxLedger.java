package io.outbox.source.postgres;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.LedgerPosition;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * The ledger watermark of a source that settles in the outbox table (polling and CDC): reads it,
 * advances it inside a claim's settlement, and settles rows named by ledger records under the
 * source's fence, like a claim's settlement, so that an instance that lost the active role settles
 * nothing. Like {@link ClaimVerdicts} it needs {@code outbox-relay-spi}, which the sources have.
 */
public final class OutboxLedger implements JdbcLedgerWatermark.Store {

  private final Supplier<? extends DataSource> pool;
  private final LedgerWatermarks sql;
  private final String pipeline;
  private final boolean delete;
  private final Supplier<LedgerWatermarks.Fence> fence;

  /**
   * @param pool the source's pool, {@code null} before the activation
   * @param delete whether published rows are deleted ({@code on-publish = delete})
   * @param fence the check of the epoch this instance holds when a settlement begins (a {@link
   *     LeaderLease#epochFenceHolds} of it), run in the settlement's transaction; {@code null} when
   *     this instance knows it lost the lease
   */
  public OutboxLedger(
      Supplier<? extends DataSource> pool,
      OutboxTables tables,
      String pipeline,
      boolean delete,
      Supplier<LedgerWatermarks.Fence> fence) {
    this.pool = pool;
    this.sql = new LedgerWatermarks(tables);
    this.pipeline = pipeline;
    this.delete = delete;
    this.fence = fence;
  }

  /** {@inheritDoc} Only while the epoch of this instance's lease holds; {@code null} otherwise. */
  @Override
  public Map<Integer, Long> read() throws SQLException {
    LedgerWatermarks.Fence current = fence.get();
    return current == null ? null : sql.read(pool.get(), current, pipeline);
  }

  /** {@inheritDoc} Fenced by the epoch of this instance's lease, as a claim's settlement is. */
  @Override
  public int settle(LedgerPosition position, Map<Long, UUID> named) throws SQLException {
    LedgerWatermarks.Fence current = fence.get();
    if (current == null) {
      return -1;
    }
    return sql.settleRecord(
        pool.get(), current, pipeline, position.partition(), position.offset(), named, delete);
  }

  /**
   * In a settlement's open transaction on {@code c}: advances the watermark of {@code position}'s
   * partition to it.
   */
  public void advance(Connection c, LedgerPosition position) throws SQLException {
    sql.advance(c, pipeline, position.partition(), position.offset());
  }
}
