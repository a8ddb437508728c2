package io.outbox.source.cdc.table;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.source.cdc.CdcConnections;
import io.outbox.source.cdc.CdcSettings;
import io.outbox.source.cdc.stream.ChangeStream;
import io.outbox.source.cdc.stream.OutboxRows;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reconciliation sweep: rows still unpublished {@code reconcile-after} after they were created
 * — measured against how far the stream has come, so a lagging stream is not mistaken for a lost
 * one — are read by a polling pass and handed to the stream's lanes, ahead of streamed events, so
 * their key's order holds: rows the stream did not deliver, and delayed rows the stream passed on
 * because they were due beyond {@code reconcile-after}. Waits while a {@link CatchUp} is read.
 */
public final class ReconcileSweep {

  private static final Logger log = LoggerFactory.getLogger(ReconcileSweep.class);
  private static final int PAGE = 500;

  private final CdcConnections connections;
  private final CdcSettings settings;
  private final OutboxTables tables;
  private final String pipeline;
  private final ChangeStream<?> stream;
  private final OutboxRows rows;
  private long swept;

  public ReconcileSweep(
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
    this.rows = new OutboxRows(tables);
  }

  /**
   * The sweep thread: a pass every {@code reconcile-interval} until the session stops or its engine
   * ended ({@code ended}); a failed pass is retried at the next.
   */
  public void loop(BooleanSupplier stopping, CountDownLatch ended) {
    long every = settings.reconcileInterval().toMillis();
    while (!stopping.getAsBoolean()) {
      try {
        if (ended.await(every, TimeUnit.MILLISECONDS)) {
          return;
        }
        run();
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        log.warn("pipeline {}: the reconcile sweep failed, retrying: {}", pipeline, e.getMessage());
      }
    }
  }

  /** One pass; returns how many rows it handed to the lanes. Runs on the sweep thread only. */
  synchronized int run() throws SQLException {
    if (stream.catchingUp()) {
      return 0; // the catch-up reads the rows in id order first
    }
    Instant reached = stream.streamTime();
    if (reached == null) {
      return 0; // no heartbeat through the stream yet: cannot tell lost rows from late ones
    }
    Instant cutoff = reached.minus(settings.reconcileAfter());
    int added = sweep(cutoff);
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

  private int sweep(Instant cutoff) throws SQLException {
    int added = 0;
    try (Connection c = connections.dedicatedReader("sweep")) {
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
        if (page.size() < PAGE) {
          break;
        }
      }
    }
    return added;
  }

  private List<OutboxEvent> page(Connection c, Instant cutoff, long after) throws SQLException {
    String sql =
        "SELECT "
            + rows.columns(c)
            + " FROM "
            + tables.qualifiedTable()
            + " o WHERE o.published_at IS NULL AND "
            + tables.columns().id("o")
            + " > ? AND o.created_at < ?"
            + " AND o.available_at <= now()"
            + " AND (o.next_attempt_at IS NULL OR o.next_attempt_at <= now())"
            + " ORDER BY "
            + tables.columns().id("o")
            + " LIMIT "
            + PAGE;
    List<OutboxEvent> events = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, after);
      ps.setTimestamp(2, Timestamp.from(cutoff));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          events.add(rows.event(rs));
        }
      }
    }
    return events;
  }
}
