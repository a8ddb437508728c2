package io.outbox.source.polling;

import io.outbox.client.OutboxColumns;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.source.polling.PositionWindows.LanePosition;
import io.outbox.source.postgres.ClaimVerdicts;
import io.outbox.source.postgres.OutboxVerdicts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The settlement of a claim made by {@link OutboxSql#positionClaim} ({@code on-publish =
 * position}), in the claim's transaction: the lane's position first, by compare-and-set, then the
 * rows that still need a write. A published window row needs none: the position settles it. A
 * published exception is marked ({@code published_at}); retries and dead letters are written as
 * today, window rows or not. A window row the position moves past without its verdict (passed: its
 * key held back, or not yet available; or released, or left without a settlement) becomes an
 * exception ({@code next_attempt_at} set), claimed by its row from then on.
 */
final class PositionSettlement {

  /** The lane's position was no longer the one the claim was made from: nothing was written. */
  static final class PositionMoved extends Exception {
    PositionMoved(String message) {
      super(message);
    }
  }

  private final PositionWindows windows;
  private final OutboxVerdicts verdicts;
  private final String toExceptions;

  PositionSettlement(
      PositionWindows windows, OutboxVerdicts verdicts, String outbox, OutboxColumns columns) {
    this.windows = windows;
    this.verdicts = verdicts;
    // clock_timestamp(), as the verdicts: the claim's transaction may have started long before.
    this.toExceptions =
        "UPDATE "
            + outbox
            + " o SET next_attempt_at = clock_timestamp() WHERE "
            + columns.id("o")
            + " = ANY(?) AND o.published_at IS NULL AND o.next_attempt_at IS NULL";
  }

  /**
   * Settles the claim: moves the lane's position from {@code from} to {@code to}, then writes.
   *
   * @param events the claim's events
   * @param window the ids of its window rows (the others are exceptions)
   * @param passed the window rows it did not hand out (held back, not yet available)
   * @param settlements the verdicts, at most one per event; events without one are left
   * @return what the verdicts wrote
   * @throws PositionMoved when the lane's position is no longer {@code from}; nothing is written,
   *     and the caller rolls the claim's transaction back
   */
  OutboxVerdicts.Written settle(
      Connection c,
      String pipeline,
      int lane,
      long epoch,
      List<OutboxEvent> events,
      Set<Long> window,
      List<Long> passed,
      List<Settlement> settlements,
      LanePosition from,
      LanePosition to)
      throws SQLException, PositionMoved {
    OutboxVerdicts.Batch batch = ClaimVerdicts.of(verdicts, events, settlements, window::contains);
    if (!windows.advance(c, pipeline, lane, epoch, from, to)) {
      throw new PositionMoved(
          "pipeline "
              + pipeline
              + " lane "
              + lane
              + ": the lane's position is no longer the one this claim was made from, or another"
              + " instance took over (epoch "
              + epoch
              + " is no longer the pipeline's)");
    }
    OutboxVerdicts.Written written = batch.write(c, false, pipeline);
    Set<Long> decided = new HashSet<>();
    for (Settlement s : settlements) {
      if (!(s instanceof Settlement.Release)) {
        decided.add(s.event().id());
      }
    }
    List<Long> exceptions = new ArrayList<>(passed);
    for (OutboxEvent e : events) {
      if (window.contains(e.id()) && !decided.contains(e.id())) {
        exceptions.add(e.id());
      }
    }
    if (!exceptions.isEmpty()) {
      try (PreparedStatement ps = c.prepareStatement(toExceptions)) {
        ps.setArray(1, c.createArrayOf("bigint", exceptions.toArray()));
        ps.executeUpdate();
      }
    }
    return written;
  }
}
