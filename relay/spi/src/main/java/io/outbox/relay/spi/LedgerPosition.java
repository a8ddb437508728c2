package io.outbox.relay.spi;

/**
 * Where a ledger record was written.
 *
 * @param partition the ledger partition (the lane that wrote it)
 * @param offset the record's offset in the partition
 */
public record LedgerPosition(int partition, long offset) {
  public LedgerPosition {
    if (partition < 0 || offset < 0) {
      throw new IllegalArgumentException(
          "partition and offset must not be negative, got " + partition + "/" + offset);
    }
  }
}
