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

  /**
   * The claim of settlement by position ({@link #positionClaim(String, OutboxColumns, String,
   * String, String, String, String)}).
   */
  final String positionClaim;

  /**
   * {@link #positionClaim} without the exceptions of the lane's claim in flight (bound as a {@code
   * bigint[]} after the exceptions' lane): the claim made ahead, from the position that claim
   * settles to.
   */
  final String positionClaimAhead;

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
    String lanePredicate = lanePredicate(c, lanes);
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
    String epochPredicate =
        LeaderLease.epochPredicate(tables.outboxTables().qualifiedLeaderTable());
    String notInFlight = "            AND " + c.id("o") + " NOT IN (SELECT unnest(?::bigint[]))\n";
    this.positionClaim =
        positionClaim(outbox, c, payloadColumn, headers, lanePredicate, "", epochPredicate);
    this.positionClaimAhead =
        positionClaim(
            outbox, c, payloadColumn, headers, lanePredicate, notInFlight, epochPredicate);
    lanePredicate += "   AND " + epochPredicate + "\n";
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

  /**
   * {@code AND <the lane of row o> = ?}, one line, or nothing with one lane: the rows of one lane
   * (bound as an int).
   */
  static String lanePredicate(OutboxColumns c, int lanes) {
    return lanes == 1
        ? ""
        // coalesce: a NULL key (a table made by hand) still falls into a lane, which
        // dead-letters it, instead of matching none and waiting forever.
        : "   AND " + LaneFunction.sql(c.aggregateType("o"), c.aggregateId("o"), lanes) + " = ?\n";
  }

  private static String claim(
      String outbox,
      OutboxColumns c,
      String payloadColumn,
      String headers,
      String lanePredicate,
      String excludePredicate) {
    return held(outbox, c)
        + "SELECT "
        + columns(c, payloadColumn, headers)
        + "\n"
        + "  FROM "
        + outbox
        + " o, held h\n"
        + " WHERE o.published_at IS NULL\n"
        + "   AND o.available_at <= now()\n"
        + "   AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= now())\n"
        + lanePredicate
        + excludePredicate
        + "   AND NOT "
        + heldBack(c, "o")
        + "\n"
        + " ORDER BY "
        + c.id("o")
        + "\n"
        + " LIMIT ?\n"
        // No SKIP LOCKED: the lane's advisory lock already keeps the relay's own claims apart,
        // and skipping a row someone else locked would let its key's later events go first.
        // A foreign lock makes the claim wait (at most statement-timeout) instead.
        + " FOR UPDATE OF o";
  }

  /**
   * The claim of settlement by position ({@link PositionWindows}, {@code on-publish = position}):
   * the lane's exceptions that are due, in id order, merged with the next rows of its window. Each
   * row comes with two flags after the columns EventColumns.read takes: {@code in_window}, and
   * {@code passed}, a window row that is not to be published now (its key is held back by a retry,
   * or it is not yet available), which the settlement turns into an exception since the position
   * moves past it. Availability is checked at the statement's start, not the transaction's: a row
   * whose transaction began after the claim's and committed before the window was cut has an {@code
   * available_at} (its default, its transaction's start) after the claim's {@code now()}, yet is
   * due. Held-back and unavailable exceptions are left out, as in {@link #claim}. No row lock: the
   * lane's advisory lock keeps the relay's claims apart, and the position moves by compare-and-set.
   *
   * <p>Bound in order: the exceptions' lane, (made ahead) the ids in flight, their limit; the
   * window's {@code after}, {@code last}, {@code window} and {@code settled} snapshots, its lane,
   * its limit; the pipeline, the epoch, the limit.
   */
  private static String positionClaim(
      String outbox,
      OutboxColumns c,
      String payloadColumn,
      String headers,
      String lanePredicate,
      String excludePredicate,
      String epochPredicate) {
    String id = c.id("o");
    String branch = columns(c, payloadColumn, headers) + ", o.available_at, ";
    return held(outbox, c)
        + "SELECT u.*, u.in_window AND (u.available_at > statement_timestamp() OR "
        + heldBack(c, "u")
        + ") AS passed\n"
        + "  FROM ((SELECT "
        + branch
        + "false AS in_window\n"
        + "           FROM "
        + outbox
        + " o, held h\n"
        + "          WHERE o.published_at IS NULL AND o.next_attempt_at IS NOT NULL\n"
        + "            AND o.next_attempt_at <= now() AND o.available_at <= statement_timestamp()\n"
        + lanePredicate
        + excludePredicate
        + "            AND NOT "
        + heldBack(c, "o")
        + "\n"
        + "          ORDER BY "
        + id
        + " LIMIT ?)\n"
        + "        UNION ALL\n"
        + "        (SELECT "
        + branch
        + "true AS in_window\n"
        + "           FROM "
        + outbox
        + " o\n"
        + "          WHERE "
        + PositionWindows.windowPredicate(c)
        + lanePredicate
        + "          ORDER BY "
        + id
        + " LIMIT ?)) u, held h\n"
        + " WHERE "
        + epochPredicate
        + "\n"
        + " ORDER BY 1\n"
        + " LIMIT ?";
  }

  /**
   * The held keys, read once per claim, each with its first waiting id, into one jsonb object that
   * every candidate row looks its key up in. Neither a correlated probe per row nor a join leaves
   * the planner a way to go quadratic: when the statistics say no row is pending (the last ANALYZE
   * ran in a quiet spell), a per-row probe read the pending index instead of the retrying one, once
   * per candidate row (6,000 pending, 1,000 keys held: 306 ms instead of 10 ms per claim), and an
   * anti-join compares every pending row with every retrying row (1M-row outbox, 1,000 retrying:
   * 214 ms instead of 5 ms).
   */
  private static String held(String outbox, OutboxColumns c) {
    return "WITH held AS MATERIALIZED (\n"
        + "  SELECT coalesce(jsonb_object_agg(k.key, k.first), '{}') AS ids\n"
        + "    FROM (SELECT "
        + keyOf(c, "b")
        + " AS key, min("
        + c.id("b")
        + ") AS first\n"
        + "            FROM "
        + outbox
        + " b\n"
        + "           WHERE b.published_at IS NULL AND b.next_attempt_at IS NOT NULL\n"
        + "             AND b.next_attempt_at > now()\n"
        + "           GROUP BY 1) k)\n";
  }

  /**
   * Whether the row {@code alias} is held back: its key's earlier event waits for its retry (a key
   * whose earlier event waits is held back; other keys flow).
   */
  private static String heldBack(OutboxColumns c, String alias) {
    return "coalesce((h.ids ->> " + keyOf(c, alias) + ")::bigint < " + c.id(alias) + ", false)";
  }

  /** jsonb_build_array(type, id)::text names a key without a separator that a key could contain. */
  private static String keyOf(OutboxColumns c, String alias) {
    return "jsonb_build_array(" + c.aggregateType(alias) + ", " + c.aggregateId(alias) + ")::text";
  }

  /** The claimed columns, in the order EventColumns.read takes them. */
  private static String columns(OutboxColumns c, String payloadColumn, String headers) {
    return String.join(
        ", ",
        c.id("o") + " AS id",
        c.eventId("o") + " AS event_id",
        c.aggregateType("o") + " AS aggregate_type",
        c.aggregateId("o") + " AS aggregate_id",
        c.eventType("o") + " AS event_type",
        "o.destination",
        payloadColumn + " AS payload",
        headers + " AS headers",
        "o.created_at",
        "o.attempts");
  }
}
