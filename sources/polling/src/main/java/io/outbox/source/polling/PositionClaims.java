package io.outbox.source.polling;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.relay.spi.Settlement;
import io.outbox.source.polling.PositionWindows.LanePosition;
import io.outbox.source.postgres.EventColumns;
import io.outbox.source.postgres.OutboxVerdicts;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The claims of a pipeline that settles by position ({@code on-publish = position}): a claim reads
 * from its lane's position ({@link PositionWindows}) with {@link OutboxSql#positionClaim}, and its
 * settlement moves the position ({@link PositionSettlement}).
 */
final class PositionClaims {

  /**
   * A claim's rows and where it moves the lane's position.
   *
   * @param events the events to publish, in id order
   * @param window the ids of those that are window rows (the others are exceptions)
   * @param passed window rows not handed out (held back, not yet available), which become
   *     exceptions
   * @param from the lane's position the claim was made from
   * @param to the position its settlement moves the lane to
   * @param epoch the epoch of the instance that read it, which alone may move the position
   */
  record Read(
      List<OutboxEvent> events,
      Set<Long> window,
      List<Long> passed,
      LanePosition from,
      LanePosition to,
      long epoch) {}

  private final PositionWindows windows;
  private final PositionSettlement settlement;
  private final OutboxSql sql;
  private final boolean laned;
  private final String pipeline;

  PositionClaims(TableNames tables, OutboxSql sql, int lanes, String pipeline) {
    this.windows = new PositionWindows(tables.outboxTables(), lanes);
    this.settlement =
        new PositionSettlement(
            windows,
            new OutboxVerdicts(tables.outboxTables()),
            tables.qualifiedTable(),
            tables.columns());
    this.sql = sql;
    this.laned = lanes > 1;
    this.pipeline = pipeline;
  }

  /** Starts the lanes' positions unless they run with this lane count; the caller commits. */
  boolean start(Connection c) throws SQLException {
    return windows.start(c, pipeline);
  }

  /**
   * Reads a claim of {@code lane}: from its stored position, or, made ahead, from where {@code
   * inFlight} settles to, leaving out {@code inFlight}'s exceptions.
   *
   * @param inFlight the lane's claim in flight, or null
   * @throws IllegalStateException when the lane has no position (not started)
   */
  Read read(
      Connection c, int lane, long epoch, int limit, PayloadFormat format, PollingClaim inFlight)
      throws SQLException {
    LanePosition from =
        inFlight == null ? windows.read(c, pipeline, lane) : inFlight.position().to();
    if (from == null) {
      throw new IllegalStateException(
          "pipeline " + pipeline + " lane " + lane + ": no position; the lanes were not started");
    }
    LanePosition window = from.exhausted() ? windows.turn(c, from) : from;
    List<OutboxEvent> events = new ArrayList<>();
    Set<Long> inWindow = new HashSet<>();
    List<Long> passed = new ArrayList<>();
    int rows = 0;
    long lastOfWindow = -1;
    try (PreparedStatement ps =
        c.prepareStatement(inFlight == null ? sql.positionClaim : sql.positionClaimAhead)) {
      int i = 1;
      if (laned) {
        ps.setInt(i++, lane);
      }
      if (inFlight != null) {
        ps.setArray(i++, c.createArrayOf("bigint", inFlight.ids()));
      }
      ps.setInt(i++, limit);
      ps.setLong(i++, window.after());
      ps.setLong(i++, window.last());
      ps.setString(i++, window.window());
      ps.setString(i++, window.settled());
      if (laned) {
        ps.setInt(i++, lane);
      }
      ps.setInt(i++, limit);
      ps.setString(i++, pipeline);
      ps.setLong(i++, epoch);
      ps.setInt(i, limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows++;
          OutboxEvent e = EventColumns.read(rs, format, EventRows::headers);
          if (rs.getBoolean("in_window")) {
            lastOfWindow = e.id();
            if (rs.getBoolean("passed")) {
              passed.add(e.id());
              continue;
            }
            inWindow.add(e.id());
          }
          events.add(e);
        }
      }
    }
    // Fewer rows than the limit: the window's branch returned all it had. Otherwise the window's
    // rows after the last one returned have greater ids than every row returned.
    LanePosition to =
        rows < limit
            ? window.readToEnd()
            : lastOfWindow >= 0 ? window.readTo(lastOfWindow) : window;
    return new Read(events, inWindow, passed, from, to, epoch);
  }

  /**
   * Settles {@code read} in its transaction: moves the lane's position, then writes what the
   * position cannot settle; published exceptions are marked.
   *
   * @throws PositionSettlement.PositionMoved when the lane's position is no longer the claim's;
   *     nothing was written and the caller rolls back
   */
  OutboxVerdicts.Written settle(Connection c, int lane, Read read, List<Settlement> settlements)
      throws SQLException, PositionSettlement.PositionMoved {
    return settlement.settle(
        c,
        pipeline,
        lane,
        read.epoch(),
        read.events(),
        read.window(),
        read.passed(),
        settlements,
        read.from(),
        read.to());
  }
}
