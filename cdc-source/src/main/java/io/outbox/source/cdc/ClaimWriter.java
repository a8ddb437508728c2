package io.outbox.source.cdc;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.schema.OutboxLedger;
import io.outbox.schema.OutboxTables;
import io.outbox.schema.OutboxVerdicts;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the verdicts of the CDC source's claims to the outbox, fenced by the leader lock's epoch,
 * each batch in one transaction on a pool connection, with the ledger watermark when a position is
 * given ({@link CdcClaim.Writer}).
 */
final class ClaimWriter implements CdcClaim.Writer {

  private static final Logger log = LoggerFactory.getLogger(CdcSource.class);

  private final String pipeline;
  private final OutboxTables tables;
  private final OutboxVerdicts verdicts;
  private final Supplier<HikariDataSource> pool;
  private final CdcLeaderLock leader;
  private final OutboxLedger ledger;
  private final OnPublish onPublish;

  /**
   * @param pool the source's pool, {@code null} before the activation and once closed
   */
  ClaimWriter(
      String pipeline,
      OutboxTables tables,
      OutboxVerdicts verdicts,
      Supplier<HikariDataSource> pool,
      CdcLeaderLock leader,
      OutboxLedger ledger,
      OnPublish onPublish) {
    this.pipeline = pipeline;
    this.tables = tables;
    this.verdicts = verdicts;
    this.pool = pool;
    this.leader = leader;
    this.ledger = ledger;
    this.onPublish = onPublish;
  }

  @Override
  public OutboxVerdicts.Written write(OutboxVerdicts.Batch batch, LedgerPosition position)
      throws SQLException {
    HikariDataSource p = pool.get();
    if (p == null) {
      throw new SQLException("source closed");
    }
    try (Connection c = p.getConnection()) {
      OutboxVerdicts.Written written;
      try {
        leader.checkFence(c);
        written = batch.write(c, onPublish == OnPublish.DELETE, pipeline);
        if (position != null) {
          ledger.advance(c, position);
        }
        c.commit();
      } catch (SQLException e) {
        c.rollback();
        throw e;
      }
      if (!written.complete()) {
        log.warn(
            "pipeline {}: fewer rows than expected changed in {} (published twice, or changed by"
                + " hand): {}",
            pipeline,
            tables.displayTable(),
            written);
      }
      return written;
    }
  }

  @Override
  public boolean owned() {
    return leader.held();
  }

  @Override
  public OutboxVerdicts verdicts() {
    return verdicts;
  }

  @Override
  public String pipeline() {
    return pipeline;
  }
}
