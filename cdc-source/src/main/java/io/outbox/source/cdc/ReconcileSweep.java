package io.outbox.source.cdc;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PayloadFormat;
import io.outbox.schema.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reconciliation sweep: rows still unpublished {@code reconcile-after} after they were created
 * — measured against how far the stream has come, so a lagging stream is not mistaken for a lost
 * one — are read by a polling pass and handed to the stream's lanes, ahead of streamed events, so
 * their key's order holds. Catches rows committed before the slot existed, or lost with a dropped
 * slot.
 */
final class ReconcileSweep {

  private static final Logger log = LoggerFactory.getLogger(ReconcileSweep.class);
  private static final int PAGE = 500;

  private final CdcConnections connections;
  private final CdcSettings settings;
  private final OutboxTables tables;
  private final String pipeline;
  private final ChangeStream<?> stream;
  private PayloadFormat format; // found on the first run
  private long swept;

  ReconcileSweep(
      CdcConnections connections,
      CdcSettings settings,
      OutboxTables tables,
      String pipeline,
      ChangeStream<?> stream) {
    this.connections = connections;
    this.settings = settings;
    this.tables = tables;
    this.pipeline = pipeline;
    this.stream = stream;
  }

  /** One pass; returns how many rows it handed to the lanes. Runs on the sweep thread only. */
  synchronized int run() throws SQLException {
    Instant reached = stream.streamTime();
    if (reached == null) {
      return 0; // no heartbeat through the stream yet: cannot tell lost rows from late ones
    }
    Instant cutoff = reached.minus(settings.reconcileAfter());
    int added = sweep(cutoff, Integer.MAX_VALUE);
    if (added > 0) {
      swept += added;
      log.warn(
          "pipeline {}: the reconcile sweep found {} row(s) of {} created before {} and still"
              + " unpublished that the stream did not deliver; publishing them ({} so far)",
          pipeline,
          added,
          tables.displayTable(),
          cutoff,
          swept);
    }
    return added;
  }

  /**
   * Right after a new slot was created, before any claim: every unpublished, due row (up to {@code
   * limit}) goes ahead of what the new slot streams, so rows committed before the slot existed keep
   * their key's order. Rows the slot streams as well are taken once.
   */
  synchronized int catchUp(int limit) throws SQLException {
    int added = sweep(null, limit);
    if (added > 0) {
      swept += added;
      log.info(
          "pipeline {}: the new slot does not cover {} unpublished row(s) of {} committed before it;"
              + " publishing them first{}",
          pipeline,
          added,
          tables.displayTable(),
          added >= limit
              ? " (more remain: the reconcile sweep takes them after reconcile-after)"
              : "");
    }
    return added;
  }

  private int sweep(Instant cutoff, int limit) throws SQLException {
    int added = 0;
    try (Connection c = connections.dedicated("sweep")) {
      if (format == null) {
        format = payloadFormat(c);
      }
      long after = Long.MIN_VALUE;
      while (true) {
        List<OutboxEvent> page = page(c, cutoff, after);
        if (page.isEmpty()) {
          break;
        }
        after = page.get(page.size() - 1).id();
        List<OutboxEvent> fresh = new ArrayList<>();
        for (OutboxEvent e : page) {
          if (!stream.holds(e.id())) {
            fresh.add(e);
          }
        }
        added += stream.offerSwept(fresh);
        if (page.size() < PAGE || added >= limit) {
          break;
        }
      }
    }
    return added;
  }

  private List<OutboxEvent> page(Connection c, Instant cutoff, long after) throws SQLException {
    String payload = format == PayloadFormat.BINARY ? "o.payload" : "o.payload::text";
    String sql =
        "SELECT o.id, o.event_id, o.aggregate_type, o.aggregate_id, o.event_type, o.destination, "
            + payload
            + ", o.headers::text, o.created_at, o.attempts FROM "
            + tables.qualifiedTable()
            + " o WHERE o.published_at IS NULL AND o.id > ?"
            + (cutoff == null ? "" : " AND o.created_at < ?")
            + " AND o.available_at <= now()"
            + " AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= now())"
            + " ORDER BY o.id LIMIT "
            + PAGE;
    List<OutboxEvent> events = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, after);
      if (cutoff != null) {
        ps.setTimestamp(2, Timestamp.from(cutoff));
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          OffsetDateTime created = rs.getObject(9, OffsetDateTime.class);
          events.add(
              ChangeEvents.event(
                  rs.getLong(1),
                  rs.getObject(2, UUID.class),
                  rs.getString(3),
                  rs.getString(4),
                  rs.getString(5),
                  rs.getString(6),
                  rs.getBytes(7),
                  format,
                  rs.getString(8),
                  created == null ? null : created.toInstant(),
                  rs.getInt(10)));
        }
      }
    }
    return events;
  }

  private PayloadFormat payloadFormat(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                + " WHERE attrelid = to_regclass(?) AND attname = 'payload' AND NOT attisdropped")) {
      ps.setString(1, tables.qualifiedTable());
      try (ResultSet rs = ps.executeQuery()) {
        String type = rs.next() ? rs.getString(1) : "jsonb";
        return switch (type) {
          case "bytea" -> PayloadFormat.BINARY;
          case "text" -> PayloadFormat.TEXT;
          default -> PayloadFormat.JSON;
        };
      }
    }
  }
}
