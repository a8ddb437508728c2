package io.outbox.source.cdc.stream;

import io.outbox.relay.spi.AggregateKey;
import java.util.Arrays;

/**
 * What is left in memory of a held-back key's events once they were parked (a full lane while one
 * of its events waits for a retry): the range of row ids still to be read back from the outbox
 * table once the key is released, how many events went into it, and the pin, the stream position of
 * the earliest streamed one, which the watermark cannot pass until every parked row is final. Rows
 * read from the table (caught up, swept) hold no position: a range of those alone has no pin (the
 * next activation's catch-up reads every pending row again), and it counts as one caught-up row not
 * final while caught-up rows in it are still to be read back. It also keeps the transactions of its
 * streamed events that may not have ended for other sessions yet: the stream has a commit once it
 * is flushed locally, and with a synchronous standby the row stays invisible until the standby
 * answers; the range is not read back while one of them is in progress ({@link #committingAt}), or
 * the read would skip that row. Guarded by the stream's lock.
 */
final class ParkedKey {

  private final AggregateKey key;
  private long firstId; // the lowest id not read back yet
  private long lastId; // the highest id parked
  private long count; // events parked so far (diagnostics)
  private Watermark.Position pin; // null while only rows read from the table are parked
  private long caughtUpLast = Long.MIN_VALUE; // the highest id of a caught-up row parked
  private boolean holdsCaughtUp; // counts in the stream's caught-up rows not final
  // The transaction ids of streamed parked events not yet seen ended, in arrival order; pruned at
  // each check against a snapshot (one entry per transaction: a transaction's events arrive
  // together).
  private long[] transactions = new long[0];
  private int transactionCount;

  ParkedKey(AggregateKey key, long id, Watermark.Position pin) {
    this.key = key;
    this.firstId = id;
    this.lastId = id;
    this.count = 1;
    this.pin = pin;
  }

  AggregateKey key() {
    return key;
  }

  long firstId() {
    return firstId;
  }

  long lastId() {
    return lastId;
  }

  long count() {
    return count;
  }

  /** The pin, or {@code null} when no streamed event is parked. */
  Watermark.Position pin() {
    return pin;
  }

  /**
   * A caught-up row with id {@code id} was parked.
   *
   * @return whether the range counts as a caught-up row not final from now on (it did not before)
   */
  boolean addCaughtUp(long id) {
    caughtUpLast = Math.max(caughtUpLast, id);
    boolean was = holdsCaughtUp;
    holdsCaughtUp = true;
    return !was;
  }

  /** Whether a row with id {@code id} read back may be a caught-up one. */
  boolean caughtUp(long id) {
    return id <= caughtUpLast;
  }

  /**
   * Once every caught-up row parked was read back (or the range ends): whether the range stops
   * counting as a caught-up row not final now (it did until now).
   */
  boolean caughtUpReadBack(boolean ended) {
    if (!holdsCaughtUp || !ended && firstId <= caughtUpLast) {
      return false;
    }
    holdsCaughtUp = false;
    return true;
  }

  /** One more event of the key left memory. */
  void add(long id) {
    firstId = Math.min(firstId, id);
    lastId = Math.max(lastId, id);
    count++;
  }

  /**
   * Makes {@code earlier} the pin (an event put back from a claim parked after later ones, or the
   * first streamed event of a range that had none).
   *
   * @return the former pin, whose hold the caller releases, or {@code null}
   */
  Watermark.Position repin(Watermark.Position earlier) {
    Watermark.Position old = pin;
    pin = earlier;
    return old;
  }

  /**
   * A streamed event of transaction {@code txId} (0: unknown, a row read from the table) parked.
   */
  void addTransaction(long txId) {
    if (txId == 0 || transactionCount > 0 && transactions[transactionCount - 1] == txId) {
      return;
    }
    if (transactionCount == transactions.length) {
      transactions = Arrays.copyOf(transactions, Math.max(4, transactionCount * 2));
    }
    transactions[transactionCount++] = txId;
  }

  /**
   * Whether a transaction of a streamed parked event was still in progress at {@code snapshot} (its
   * rows invisible to a read now); forgets those that had ended, for good.
   */
  boolean committingAt(TransactionSnapshot snapshot) {
    int kept = 0;
    for (int i = 0; i < transactionCount; i++) {
      if (snapshot.inProgress(transactions[i])) {
        transactions[kept++] = transactions[i];
      }
    }
    transactionCount = kept;
    if (transactions.length > 4 * Math.max(4, kept)) {
      transactions = Arrays.copyOf(transactions, Math.max(4, kept));
    }
    return kept > 0;
  }

  /** Whether some streamed parked event's transaction was not yet seen ended. */
  boolean mayBeCommitting() {
    return transactionCount > 0;
  }

  /** The rows up to {@code id} were read back. */
  void readUpTo(long id) {
    firstId = Math.max(firstId, id + 1);
  }

  /** Whether an event of this key with row id {@code id} may be taken (it is not still parked). */
  boolean allows(long id) {
    return id < firstId;
  }
}
