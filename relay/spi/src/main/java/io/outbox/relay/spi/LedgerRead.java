package io.outbox.relay.spi;

import java.util.List;
import java.util.Map;

/**
 * What {@link TransactionalSink#readLedger} found.
 *
 * @param entries the committed records past the settled offsets, per partition in offset order
 * @param decidedTo per ledger partition read, the offset up to which every transaction on it is
 *     decided (its last stable offset when read): past the last entry, only aborted records and
 *     transaction markers lie before it, so the watermark may move up to it minus one
 */
public record LedgerRead(List<LedgerEntry> entries, Map<Integer, Long> decidedTo) {
  public LedgerRead {
    entries = List.copyOf(entries);
    decidedTo = Map.copyOf(decidedTo);
  }
}
