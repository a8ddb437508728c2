package io.outbox.source.polling;

import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.LeadershipLostException;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.relay.spi.LedgerRecord;
import io.outbox.relay.spi.LedgerWatermark;
import io.outbox.relay.spi.SourceException;
import io.outbox.schema.LeaderLease;
import io.outbox.schema.LedgerWatermarks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * The polling source's ledger watermark: reads it, and settles rows named by ledger records under
 * the fence lock and the epoch check of a claim, so that an instance that lost the active role
 * settles nothing.
 */
final class PollingLedger implements LedgerWatermark {

  private final Supplier<DataSource> pool;
  private final Supplier<LeaderLease> lease;
  private final LedgerWatermarks sql;
  private final String leaderTable;
  private final String pipeline;
  private final OnPublish onPublish;

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
    this.onPublish = onPublish;
  }

  @Override
  public Map<Integer, Long> settled() {
    try (Connection c = connection()) {
      try {
        return sql.read(c, pipeline);
      } finally {
        c.rollback();
      }
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline " + pipeline + ": reading the ledger watermark failed: " + e.getMessage(), e);
    }
  }

  @Override
  public int settleFromLedger(LedgerPosition position, List<LedgerRecord.Event> events) {
    LeaderLease l = lease.get();
    long epoch = l.epoch();
    try (Connection c = connection()) {
      boolean committed = false;
      try {
        if (!fenced(c, l, epoch)) {
          throw new LeadershipLostException(
              "pipeline "
                  + pipeline
                  + ": the active role was lost while settling the ledger; nothing settled");
        }
        List<Long> ids = new ArrayList<>(events.size());
        List<UUID> eventIds = new ArrayList<>(events.size());
        for (LedgerRecord.Event e : events) {
          ids.add(e.id());
          eventIds.add(e.eventId());
        }
        int settled = sql.settle(c, ids, eventIds, onPublish == OnPublish.DELETE);
        sql.advance(c, pipeline, position.partition(), position.offset());
        c.commit();
        committed = true;
        return settled;
      } finally {
        if (!committed) {
          c.rollback();
        }
      }
    } catch (SQLException e) {
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": settling ledger record "
              + position
              + " failed: "
              + e.getMessage(),
          e);
    }
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

  private Connection connection() throws SQLException {
    DataSource p = pool.get();
    if (p == null) {
      throw new IllegalStateException("pipeline " + pipeline + ": ledger used before activate()");
    }
    return p.getConnection();
  }
}
