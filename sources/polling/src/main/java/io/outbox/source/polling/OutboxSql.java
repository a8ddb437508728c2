package io.outbox.source.polling;

import io.outbox.client.OutboxColumns;
import io.outbox.relay.spi.LaneFunction;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.source.postgres.LeaderLease;

/**
 * Every statement the polling source runs, built once from the quoted table names, the payload
 * column's type and the lane count. Values are always bind parameters; identifiers come from {@link
 * TableNames} only.
 */
final class OutboxSql {

  /**
   * Opens a claim: the fence lock, shared (false while an instance takes over), and the lane's lock
   * (per-lane mutual exclusion across instances); both are released when the claim's transaction
   * ends.
   */
  static final String TRY_FENCE_AND_LANE_LOCK = LeaderLease.claimFenceSql();

  /** Opens a claim made ahead: the fence lock alone (the lane's in-flight claim holds its lock). */
  static final String TRY_FENCE_LOCK = LeaderLease.fenceOnlySql();

  /** The outbox table, for messages. */
  final String table;

  final String claim;

  /**
   * {@link #claim} without the rows of the lane's claim in flight (bound as a {@code bigint[]}
   * after the lane): the claim made ahead while that one is being published.
   */
  final String claimAhead;

  final String listen;

  /**
   * @param tables the pipeline's tables
   * @param payload the payload column's format, which decides how it is read
   * @param lanes the lane count; with one lane the claim has no lane predicate
   */
  OutboxSql(TableNames tables, PayloadFormat payload, int lanes) {
    this.table = tables.displayTable();
    String outbox = tables.qualifiedTable();
    OutboxColumns c = tables.columns();
    String lanePredicate =
        lanes == 1
            ? ""
            // coalesce: a NULL key (a table made by hand) still falls into a lane, which
            // dead-letters it, instead of matching none and waiting forever.
            : "   AND "
                + LaneFunction.sql(c.aggregateType("o"), c.aggregateId("o"), lanes)
                + " = ?\n";
    // jsonb is read through its text form; json and text as stored; bytea byte for byte.
    String payloadColumn =
        payload == PayloadFormat.BINARY ? c.payload("o") : c.payload("o") + "::text";
    // Headers as text, taken apart by EventRows (two jsonb_each_text sub-selects per row cost the
    // database 40 % of the claim). A jsonb column prints as before; a text column is not cast to
    // jsonb here, where one row of invalid JSON would fail every claim of the lane: EventRows
    // turns it into a defect of that event.
    String headers = "o.headers::text";
    // Rows are returned only while this instance's epoch is the pipeline's: a fenced instance
    // claims nothing. Bound after the lane: the pipeline, the epoch.
    lanePredicate +=
        "   AND " + LeaderLease.epochPredicate(tables.outboxTables().qualifiedLeaderTable()) + "\n";
    this.claim = claim(outbox, c, payloadColumn, headers, lanePredicate, "");
    this.claimAhead =
        claim(
            outbox,
            c,
            payloadColumn,
            headers,
            lanePredicate,
            // A hashed sub-plan: one probe per scanned row, whatever the batch size.
            "   AND " + c.id("o") + " NOT IN (SELECT unnest(?::bigint[]))\n");
    // Quoted as before; the channel is lower-case letters, digits and _, so quoting changes
    // nothing.
    this.listen = "LISTEN \"" + tables.notifyChannel() + "\"";
  }

  private static String claim(
      String outbox,
      OutboxColumns c,
      String payloadColumn,
      String headers,
      String lanePredicate,
      String excludePredicate) {
    // The columns in the order EventColumns.read takes them.
    return "SELECT "
        + String.join(
            ", ",
            c.id("o"),
            c.eventId("o"),
            c.aggregateType("o"),
            c.aggregateId("o"),
            c.eventType("o"),
            "o.destination")
        + ",\n"
        + "       "
        + payloadColumn
        + ",\n"
        + "       "
        + headers
        + ",\n"
        + "       o.created_at, o.attempts\n"
        + "  FROM "
        + outbox
        + " o\n"
        + " WHERE o.published_at IS NULL\n"
        + "   AND o.available_at <= now()\n"
        + "   AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= now())\n"
        + lanePredicate
        + excludePredicate
        // A key whose earlier event waits for its retry is held back; other keys flow.
        // OFFSET 0 keeps this a per-row probe of the small retrying index. Without it the
        // planner may flatten it into an anti-join that compares every pending row with every
        // retrying row (1M-row outbox, 1,000 retrying: 214 ms instead of 5 ms per claim).
        + "   AND NOT EXISTS (SELECT 1 FROM "
        + outbox
        + " b\n"
        + "                    WHERE b.published_at IS NULL AND b.next_attempt_at IS NOT NULL\n"
        + "                      AND b.next_attempt_at > now()\n"
        + "                      AND "
        + c.aggregateType("b")
        + " = "
        + c.aggregateType("o")
        + "\n"
        + "                      AND "
        + c.aggregateId("b")
        + " = "
        + c.aggregateId("o")
        + " AND "
        + c.id("b")
        + " < "
        + c.id("o")
        + "\n"
        + "                   OFFSET 0)\n"
        + " ORDER BY "
        + c.id("o")
        + "\n"
        + " LIMIT ?\n"
        // No SKIP LOCKED: the lane's advisory lock already keeps the relay's own claims apart,
        // and skipping a row someone else locked would let its key's later events go first.
        // A foreign lock makes the claim wait (at most statement-timeout) instead.
        + " FOR UPDATE OF o";
  }
}
