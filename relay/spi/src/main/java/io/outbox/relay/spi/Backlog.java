package io.outbox.relay.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * What is waiting in a pipeline's outbox, as the database sees it now: the figures behind the
 * backlog gauges of {@code /metrics} and the {@code status} command. A source computes them with a
 * few cheap queries; the relay asks at most every {@code metrics.backlog-interval} and caches the
 * answer, so a scrape never reaches the database.
 *
 * <p>Sources based on change data capture also report how much WAL their replication slot keeps the
 * server from recycling ({@link #retainedWalBytes()}); other sources leave it empty and the relay
 * then exports no {@code outbox_relay_cdc_retained_wal_bytes} gauge for the pipeline.
 *
 * @param pending rows not yet published (including those waiting for a retry or for their {@code
 *     available_at})
 * @param oldestPendingAge how long the oldest due pending row has been waiting (now minus its
 *     {@code created_at}, by the database clock); {@link Duration#ZERO} when nothing is due
 * @param retrying pending rows that failed at least once and wait for (or are due for) a retry
 * @param deadLetters rows of this pipeline in the dead-letter table now
 * @param lastError the most recent failure recorded in the database for this pipeline (a retrying
 *     row's {@code last_error}, else the newest dead letter's), one line, no payload; {@code null}
 *     when there is none
 * @param retainedWalBytes for a CDC source: the bytes of WAL between the server's current position
 *     and the slot's {@code restart_lsn}; empty for sources without a slot
 * @param walKeepShare for a CDC source: the retained WAL as a share of the server's {@code
 *     max_slot_wal_keep_size} (at 1 the server invalidates the slot); empty for sources without a
 *     slot, or without that limit
 * @param slotCreationBlocked for a CDC source: how many transactions the creation of its
 *     replication slot waits for now (0 when no creation waits); empty for sources without a slot
 * @param earlierRoundRows for a partitioned outbox ({@code layout = partitioned}): the rows of an
 *     earlier round of ids in the partition taking ids, as retention last counted them (above 0 the
 *     partition grows as a plain table would); empty otherwise, or before retention's first round
 */
public record Backlog(
    long pending,
    Duration oldestPendingAge,
    long retrying,
    long deadLetters,
    String lastError,
    OptionalLong retainedWalBytes,
    OptionalDouble walKeepShare,
    OptionalLong slotCreationBlocked,
    OptionalLong earlierRoundRows) {

  public Backlog {
    Objects.requireNonNull(oldestPendingAge, "oldestPendingAge");
    Objects.requireNonNull(retainedWalBytes, "retainedWalBytes");
    Objects.requireNonNull(walKeepShare, "walKeepShare");
    Objects.requireNonNull(slotCreationBlocked, "slotCreationBlocked");
    Objects.requireNonNull(earlierRoundRows, "earlierRoundRows");
    if (pending < 0 || retrying < 0 || deadLetters < 0) {
      throw new IllegalArgumentException(
          "negative backlog figures: pending="
              + pending
              + " retrying="
              + retrying
              + " deadLetters="
              + deadLetters);
    }
  }

  /** Figures of an outbox whose layout is not partitioned, or not counted yet. */
  public Backlog(
      long pending,
      Duration oldestPendingAge,
      long retrying,
      long deadLetters,
      String lastError,
      OptionalLong retainedWalBytes,
      OptionalDouble walKeepShare,
      OptionalLong slotCreationBlocked) {
    this(
        pending,
        oldestPendingAge,
        retrying,
        deadLetters,
        lastError,
        retainedWalBytes,
        walKeepShare,
        slotCreationBlocked,
        OptionalLong.empty());
  }

  /** Figures without a slot. */
  public Backlog(
      long pending,
      Duration oldestPendingAge,
      long retrying,
      long deadLetters,
      String lastError,
      OptionalLong retainedWalBytes) {
    this(
        pending,
        oldestPendingAge,
        retrying,
        deadLetters,
        lastError,
        retainedWalBytes,
        OptionalDouble.empty(),
        OptionalLong.empty());
  }

  /** The same figures with a CDC slot's retained WAL added. */
  public Backlog withRetainedWalBytes(long bytes) {
    return new Backlog(
        pending,
        oldestPendingAge,
        retrying,
        deadLetters,
        lastError,
        OptionalLong.of(bytes),
        walKeepShare,
        slotCreationBlocked,
        earlierRoundRows);
  }

  /** The same figures with a CDC slot's share of {@code max_slot_wal_keep_size} added. */
  public Backlog withWalKeepShare(double share) {
    return new Backlog(
        pending,
        oldestPendingAge,
        retrying,
        deadLetters,
        lastError,
        retainedWalBytes,
        OptionalDouble.of(share),
        slotCreationBlocked,
        earlierRoundRows);
  }

  /** The same figures with the number of transactions a CDC slot's creation waits for. */
  public Backlog withSlotCreationBlocked(long blockers) {
    return new Backlog(
        pending,
        oldestPendingAge,
        retrying,
        deadLetters,
        lastError,
        retainedWalBytes,
        walKeepShare,
        OptionalLong.of(blockers),
        earlierRoundRows);
  }

  /** The same figures with the rows of an earlier round of ids in a partition added. */
  public Backlog withEarlierRoundRows(long rows) {
    return new Backlog(
        pending,
        oldestPendingAge,
        retrying,
        deadLetters,
        lastError,
        retainedWalBytes,
        walKeepShare,
        slotCreationBlocked,
        OptionalLong.of(rows));
  }
}
