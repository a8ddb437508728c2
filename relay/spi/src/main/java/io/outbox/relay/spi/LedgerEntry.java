package io.outbox.relay.spi;

import java.util.Objects;

/**
 * A committed ledger record as read back by {@link TransactionalSink#readLedger} ({@link
 * LedgerRead}).
 *
 * @param position where it is
 * @param record what it says
 */
public record LedgerEntry(LedgerPosition position, LedgerRecord record) {
  public LedgerEntry {
    Objects.requireNonNull(position, "position");
    Objects.requireNonNull(record, "record");
  }
}
