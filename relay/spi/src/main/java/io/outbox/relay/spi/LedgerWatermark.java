package io.outbox.relay.spi;

import java.util.List;
import java.util.Map;

/**
 * A source's record, in the database, of how far it settled the ledger of an exactly-once pipeline
 * ({@link TransactionalSink}): per ledger partition, the offset of the last ledger record whose
 * events are settled. {@link Claim#settle(List, LedgerPosition)} advances it in the same database
 * transaction as the settlement.
 */
public interface LedgerWatermark {

  /**
   * Per ledger partition, the last settled offset; partitions never settled are absent. Read only
   * while the database confirms this instance is the active one: the pipeline reads it before it
   * registers its transactional producers or reads the ledger.
   *
   * @throws LeadershipLostException when this instance is no longer the active one
   * @throws SourceException when the database fails
   */
  Map<Integer, Long> settled();

  /**
   * Settles events a committed transaction published but nobody settled (the relay died, or the
   * settlement failed, between the broker's commit and the database's): marks them published (or
   * deletes them, per {@code on-publish}) without sending anything, and advances the watermark of
   * {@code position}'s partition to it, in one database transaction. Rows already settled, or whose
   * event id differs, are left alone.
   *
   * @return how many rows it settled
   * @throws LeadershipLostException when this instance is no longer the active one
   * @throws SourceException when the database fails
   */
  int settleFromLedger(LedgerPosition position, List<LedgerRecord.Event> events);
}
