package io.outbox.source.cdc;

import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.support.JdbcLedgerWatermark;
import io.outbox.schema.LedgerWatermarks;
import io.outbox.schema.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * The CDC source's ledger watermark statements: reads it, advances it inside a claim's settlement,
 * and settles rows named by ledger records under the leader lock's fence, like a settlement, so
 * that an instance that lost the active role settles nothing. The stream is not told: a row settled
 * from the ledger is streamed (or read by a catch-up) again after a restart, and a claim drops it
 * then because its row is published ({@link CurrentRows}), as it drops any event published before
 * the stored position.
 */
final class CdcLedger implements JdbcLedgerWatermark.Store {

  private final Supplier<DataSource> pool;
  private final CdcLeaderLock leader;
  private final LedgerWatermarks sql;
  private final String pipeline;
  private final boolean delete;

  /**
   * @param delete whether published rows are deleted ({@code on-publish = delete})
   */
  CdcLedger(
      Supplier<DataSource> pool,
      CdcLeaderLock leader,
      OutboxTables tables,
      String pipeline,
      boolean delete) {
    this.pool = pool;
    this.leader = leader;
    this.sql = new LedgerWatermarks(tables);
    this.pipeline = pipeline;
    this.delete = delete;
  }

  @Override
  public Map<Integer, Long> read() throws SQLException {
    return sql.read(pool.get(), pipeline);
  }

  /** {@inheritDoc} Fenced by the epoch of this instance's lease, as a claim's settlement is. */
  @Override
  public int settle(LedgerPosition position, Map<Long, UUID> named) throws SQLException {
    CdcLeaderLock.Fenced epoch = leader.fenced();
    return sql.settleRecord(
        pool.get(),
        c -> fenced(c, epoch),
        pipeline,
        position.partition(),
        position.offset(),
        named,
        delete);
  }

  /**
   * In the settlement's open transaction on {@code c}: advances the watermark of {@code position}'s
   * partition to it.
   */
  void advance(Connection c, LedgerPosition position) throws SQLException {
    sql.advance(c, pipeline, position.partition(), position.offset());
  }

  /** Takes the fence lock, shared, and checks the epoch ({@link CdcLeaderLock#fenceSql()}). */
  private boolean fenced(Connection c, CdcLeaderLock.Fenced epoch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT " + leader.fenceSql())) {
      epoch.bind(ps, 1);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1) && leader.held();
      }
    }
  }
}
