package io.outbox.source.cdc.claim;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.LedgerPosition;
import io.outbox.source.cdc.lease.CdcLeaderLock;
import io.outbox.source.postgres.OutboxLedger;
import io.outbox.source.postgres.OutboxVerdicts;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the verdicts of the CDC source's claims to the outbox, fenced by the leader lock's epoch,
 * each batch in one transaction on a pool connection, with the ledger watermark when a position is
 * given ({@link CdcClaim.Writer}); a batch of published events alone, without a position, in one
 * fenced statement ({@link FencedPublish}).
 */
public final class ClaimWriter implements CdcClaim.Writer {

  private static final Logger log = LoggerFactory.getLogger(ClaimWriter.class);

  private final String pipeline;
  private final OutboxTables tables;
  private final OutboxVerdicts verdicts;
  private final Supplier<HikariDataSource> pool;
  private final CdcLeaderLock leader;
  private final OutboxLedger ledger;
  private final OnPublish onPublish;
  private final FencedPublish publish;

  /**
   * @param pool the source's pool, {@code null} before the activation and once closed
   */
  public ClaimWriter(
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
    this.publish = new FencedPublish(tables, leader.fenceSql(), onPublish == OnPublish.DELETE);
  }

  @Override
  public OutboxVerdicts.Written write(OutboxVerdicts.Batch batch, LedgerPosition position)
      throws SQLException {
    HikariDataSource p = pool.get();
    if (p == null) {
      throw new SQLException("source closed");
    }
    try (Connection c = p.getConnection()) {
      OutboxVerdicts.Written written =
          position == null && batch.onlyPublished()
              ? published(c, batch.publishedIds())
              : inTransaction(c, batch, position);
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

  /** Every event published, no ledger: one fenced statement ({@link FencedPublish}). */
  private OutboxVerdicts.Written published(Connection c, List<Long> ids) throws SQLException {
    CdcLeaderLock.Fenced fenced = leader.fenced();
    fenced.require(true, "not written"); // a lease this instance counts lost: not even tried
    c.setAutoCommit(true); // the pool restores manual commit when it goes back
    int changed = publish.write(c, fenced, ids);
    return new OutboxVerdicts.Written(changed, ids.size(), 0, 0, 0, 0, List.of());
  }

  /** The fence, the verdicts' statements and the ledger watermark in one transaction. */
  private OutboxVerdicts.Written inTransaction(
      Connection c, OutboxVerdicts.Batch batch, LedgerPosition position) throws SQLException {
    try {
      leader.checkFence(c);
      OutboxVerdicts.Written written = batch.write(c, onPublish == OnPublish.DELETE, pipeline);
      if (position != null) {
        ledger.advance(c, position);
      }
      c.commit();
      return written;
    } catch (SQLException e) {
      c.rollback();
      throw e;
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
