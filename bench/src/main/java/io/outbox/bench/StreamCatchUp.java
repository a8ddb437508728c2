package io.outbox.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;

/**
 * For a CDC relay: after the drain, waits until its change stream has passed the WAL of the
 * backlog, so that the latency run measures the steady state and the time this took is reported on
 * its own (the stall of docs/performance.md). The drain settled the backlog through the
 * activation's catch-up, which reads the table; the stream still has to carry the backlog's INSERTs
 * (and the catch-up's UPDATEs) through Debezium before it reaches anything newer. The signal: one
 * event committed right after the drain (the probe), which only the stream delivers (the catch-up
 * is over, and the sweep takes rows older than {@code reconcile-after}); once its row is settled,
 * the stream has passed every record committed before it, the backlog's included.
 */
final class StreamCatchUp {

  /** How long the wait is bounded by. */
  static final Duration TIMEOUT = Duration.ofSeconds(120);

  private static final long POLL_MILLIS = 10;

  private StreamCatchUp() {}

  /**
   * What the wait found.
   *
   * @param name the relay figure it belongs to, e.g. {@code relay cdc->kafka mark}
   * @param seconds from the probe's commit to the harness seeing its row settled (within 10 ms), or
   *     the timeout's length when it timed out
   * @param timedOut the probe's row was not settled within {@link #TIMEOUT}: the latency run that
   *     follows includes what is left of the stall
   * @param measures what the figure measures, in words
   */
  record Outcome(String name, double seconds, boolean timedOut, String measures) {}

  /**
   * Commits the probe event and waits (at most {@code timeout}) until its row has left the pending
   * rows (published and marked, or deleted).
   */
  static Outcome await(
      String name, BenchDatabase db, Workload workload, ChildJvm relay, Duration timeout)
      throws SQLException, InterruptedException {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      UUID probe = db.writer().write(c, BenchDatabase.message(workload, workload.events()));
      c.commit();
      long committed = System.nanoTime();
      c.setAutoCommit(true);
      long deadline = committed + timeout.toNanos();
      try (PreparedStatement pending =
          c.prepareStatement(
              "SELECT count(*) FROM "
                  + BenchDatabase.TABLE
                  + " WHERE event_id = ? AND published_at IS NULL")) {
        pending.setObject(1, probe);
        while (pending(pending)) {
          relay.checkAlive();
          if (System.nanoTime() > deadline) {
            return new Outcome(name, Results.round(timeout.toNanos() / 1e9, 2), true, MEASURES);
          }
          Thread.sleep(POLL_MILLIS);
        }
      }
      return new Outcome(
          name, Results.round((System.nanoTime() - committed) / 1e9, 2), false, MEASURES);
    }
  }

  private static final String MEASURES =
      "from the commit of one event right after the drain to its row settled (the harness polls"
          + " every 10 ms): how long the change stream took to pass the backlog's WAL, which the"
          + " drain's catch-up had read from the table; the latency run starts after it";

  /** Whether the probe's row is still pending (the statement prepared once, run each look). */
  private static boolean pending(PreparedStatement probePending) throws SQLException {
    try (ResultSet rs = probePending.executeQuery()) {
      rs.next();
      return rs.getLong(1) > 0;
    }
  }
}
