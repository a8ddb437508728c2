package io.outbox.source.cdc;

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
 * record, so logical decoding may stream the transaction, a moment before the committing session is
 * done and other sessions see its rows: taken as published in that moment, the event would be
 * dropped and the stored position would pass its unpublished row (soak finding F3: the row was
 * published only after a later hand-over streamed it again, out of per-key order). So a row not
 * found is looked for again, holding its key back as a retry does, until it has been missing for
 * {@link #GRACE}; only then is it final (deleted: published with {@code on-publish = delete}, or by
 * hand). A dead-lettered row is found in the dead-letter table and is final at once.
 */
final class UnseenRows {

  private static final Logger log = LoggerFactory.getLogger(UnseenRows.class);

  /** Far longer than a commit takes to become visible after its record was flushed. */
  static final Duration GRACE = Duration.ofSeconds(2);

  private static final Duration RECHECK = Duration.ofMillis(100);

  private final String pipeline;
  private final Clock clock;
  private final Map<Long, Long> missingSince = new HashMap<>(); // guarded by this; row id -> nanos

  UnseenRows(String pipeline, Clock clock) {
    this.pipeline = pipeline;
    this.clock = clock;
  }

  /**
   * The rows to claim {@code items} by: {@code read}'s pending rows, plus, for each event whose row
   * was not found and has been missing for less than {@link #GRACE}, a row due again in a moment.
   */
  synchronized Map<Long, ChangeStream.Row> pending(
      List<ChangeStream.Item> items, CurrentRows.Read read) {
    long now = System.nanoTime();
    Map<Long, ChangeStream.Row> pending = read.pending();
    Instant again = null;
    for (ChangeStream.Item item : items) {
      long id = item.event().id();
      if (!read.absent().contains(id)) {
        Long since = missingSince.remove(id);
        if (since != null && pending.containsKey(id)) {
          log.info(
              "pipeline {}: row {} was streamed {} ms before its transaction was visible to other"
                  + " sessions; claimed once it was",
              pipeline,
              id,
              Duration.ofNanos(now - since).toMillis());
        }
        continue;
      }
      Long since = missingSince.putIfAbsent(id, now);
      if (since != null && now - since >= GRACE.toNanos()) {
        missingSince.remove(id);
        continue; // gone: final
      }
      if (again == null) {
        again = clock.instant().plus(RECHECK);
        pending = new HashMap<>(pending);
      }
      pending.put(id, new ChangeStream.Row(null, again));
    }
    return pending;
  }

  /** Forgets everything: a new session's events are new. */
  synchronized void clear() {
    missingSince.clear();
  }
}
