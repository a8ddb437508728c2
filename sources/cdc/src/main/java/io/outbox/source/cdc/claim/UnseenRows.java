package io.outbox.source.cdc.claim;

import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.stream.ChangeStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streamed events whose row a claim did not find at all. PostgreSQL writes and flushes a commit
 * record, so logical decoding may stream the transaction, before the committing session is done and
 * other sessions see its rows: a moment in general, as long as a synchronous standby takes to
 * answer with {@code synchronous_standby_names} set (issue #29). Taken as published meanwhile, the
 * event would be dropped and the stored position would pass its unpublished row (soak finding F3:
 * the row was published only after a later hand-over streamed it again, out of per-key order). So a
 * row not found is looked for again, holding its key back as a retry does: for as long as its
 * transaction is still in progress to other sessions ({@link CurrentRows.Read#committing}), and
 * then until it has been missing for {@link #GRACE}; only then is it final (deleted: published with
 * {@code on-publish = delete}, or by hand). A dead-lettered row is found in the dead-letter table
 * and is final at once.
 */
public final class UnseenRows {

  private static final Logger log = LoggerFactory.getLogger(UnseenRows.class);

  /**
   * After its transaction ended to other sessions (or without its transaction id), how long a row
   * not found is looked for: far longer than a commit takes to become visible.
   */
  public static final Duration GRACE = Duration.ofSeconds(2);

  private static final Duration RECHECK = Duration.ofMillis(100);

  /** While its transaction is still in progress: it may wait long (a standby), no need to hurry. */
  private static final Duration RECHECK_COMMITTING = Duration.ofMillis(500);

  /** Since when a row is missing, and when its transaction was last seen in progress. */
  private static final class Missing {
    final long since;
    long committingAt = Long.MIN_VALUE;

    Missing(long since) {
      this.since = since;
    }

    long lastSeen() {
      return committingAt == Long.MIN_VALUE ? since : committingAt;
    }
  }

  private final String pipeline;
  private final Clock clock;
  private final Ticker ticker;
  private final Map<Long, Missing> missing = new HashMap<>(); // guarded by this; by row id

  UnseenRows(String pipeline, Clock clock, Ticker ticker) {
    this.pipeline = pipeline;
    this.clock = clock;
    this.ticker = ticker;
  }

  /**
   * The rows to claim {@code items} by: {@code read}'s pending rows, plus, for each event whose row
   * was not found and is not final yet (above), a row due again in a moment.
   */
  synchronized Map<Long, ChangeStream.Row> pending(
      List<ChangeStream.Item> items, CurrentRows.Read read) {
    long now = ticker.nanoTime();
    Map<Long, ChangeStream.Row> pending = read.pending();
    for (ChangeStream.Item item : items) {
      long id = item.event().id();
      if (!read.absent().contains(id)) {
        Missing m = missing.remove(id);
        if (m != null && pending.containsKey(id)) {
          log.info(
              "pipeline {}: row {} was streamed {} ms before its transaction was visible to other"
                  + " sessions; claimed once it was",
              pipeline,
              id,
              Duration.ofNanos(now - m.since).toMillis());
        }
        continue;
      }
      Missing m = missing.computeIfAbsent(id, k -> new Missing(now));
      boolean committing = read.committing().contains(id);
      if (committing) {
        if (m.committingAt == Long.MIN_VALUE) {
          log.info(
              "pipeline {}: row {} was streamed, but its transaction {} is still in progress to"
                  + " other sessions (its commit waits, as for a synchronous standby): its key"
                  + " waits for it",
              pipeline,
              id,
              item.txId());
        }
        m.committingAt = now;
      } else if (now - m.lastSeen() >= GRACE.toNanos()) {
        missing.remove(id);
        continue; // gone: final
      }
      if (pending == read.pending()) {
        pending = new HashMap<>(pending);
      }
      Instant again = clock.instant().plus(committing ? RECHECK_COMMITTING : RECHECK);
      pending.put(id, new ChangeStream.Row(null, again));
    }
    return pending;
  }

  /** Forgets everything: a new session's events are new. */
  synchronized void clear() {
    missing.clear();
  }
}
