package io.outbox.source.polling;

import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.support.JdbcLedgerWatermark;
import io.outbox.schema.LeaderLease;
import io.outbox.schema.LedgerWatermarks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * The polling source's ledger watermark statements: reads it, and settles rows named by ledger
 * records under the fence lock and the epoch check of a claim, so that an instance that lost the
 * active role settles nothing.
 */
final class PollingLedger implements JdbcLedgerWatermark.Store {

  private final Supplier<DataSource> pool;
  private final Supplier<LeaderLease> lease;
  private final LedgerWatermarks sql;
  private final String leaderTable;
  private final String pipeline;
  private final boolean delete;

  PollingLedger(
      Supplier<DataSource> pool,
      Supplier<LeaderLease> lease,
      TableNames tables,
      String pipeline,
      OnPublish onPublish) {
    this.pool = pool;
    this.lease = lease;
    this.sql = new LedgerWatermarks(tables.outboxTables());
    this.leaderTable = tables.outboxTables().qualifiedLeaderTable();
    this.pipeline = pipeline;
    this.delete = onPublish == OnPublish.DELETE;
  }

  @Override
  public Map<Integer, Long> read() throws SQLException {
    return sql.read(pool.get(), pipeline);
  }

  @Override
  public int settle(LedgerPosition position, Map<Long, UUID> named) throws SQLException {
    LeaderLease l = lease.get();
    long epoch = l.epoch();
    return sql.settleRecord(
        pool.get(),
        c -> fenced(c, l, epoch),
        pipeline,
        position.partition(),
        position.offset(),
        named,
        delete);
  }

  /** Takes the fence lock, shared, and checks the epoch, like a claim. */
  private boolean fenced(Connection c, LeaderLease l, long epoch) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT pg_try_advisory_xact_lock_shared(?, ?) AND "
                + LeaderLease.epochPredicate(leaderTable))) {
      int i = l.bindFence(ps, 1);
      ps.setString(i++, pipeline);
      ps.setLong(i, epoch);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1) && l.held() && l.epoch() == epoch;
      }
    }
  }
}
