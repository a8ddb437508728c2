package io.outbox.source.cdc.lease;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Checks, in a write's open transaction, that this instance may still write: the leader lock's
 * epoch fence ({@link CdcLeaderLock#checkFence}), which every offset commit, catch-up marker and
 * settlement of the CDC source passes.
 */
public interface Fence {
  /**
   * @throws SQLException when it may not (another instance took over); the write rolls back
   */
  void check(Connection c) throws SQLException;
}
