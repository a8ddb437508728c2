package io.outbox.source.polling;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Listens on the outbox's notify channel on a dedicated session and wakes the waiting lanes on
 * every notification. A broken session (found by a query every 10 s when no error says so) is
 * reopened with backoff; meanwhile lanes fall back to the poll interval.
 */
final class NotificationListener {

  private static final Logger log = LoggerFactory.getLogger(NotificationListener.class);
  private static final int RECEIVE_TIMEOUT_MS = 500;

  /**
   * How often the session is checked with a query. Waiting for notifications never fails on a
   * silent connection (the driver treats its own wait as "nothing yet"), so without this a session
   * the network lost would listen to nothing, undetected; the query fails within socket-timeout.
   */
  private static final long PROBE_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

  private static final long MIN_BACKOFF_MS = 500;
  private static final long MAX_BACKOFF_MS = 30_000;

  private final Connections connections;
  private final String listenSql;
  private final String channel;
  private final WakeUps wakeUps;
  private final String pipeline;
  private final Thread thread;
  private volatile boolean stopping;
  private volatile boolean listening;

  NotificationListener(
      Connections connections, String listenSql, String channel, WakeUps wakeUps, String pipeline) {
    this.connections = connections;
    this.listenSql = listenSql;
    this.channel = channel;
    this.wakeUps = wakeUps;
    this.pipeline = pipeline;
    this.thread = new Thread(this::run, "outbox-relay-" + pipeline + "-polling-listener");
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Whether the session is currently listening (for tests and diagnostics). */
  boolean listening() {
    return listening;
  }

  void close(Duration timeout) {
    stopping = true;
    thread.interrupt();
    try {
      thread.join(Math.max(1, timeout.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void probe(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute("SELECT 1");
    }
  }

  private void run() {
    long backoff = MIN_BACKOFF_MS;
    while (!stopping) {
      try (Connection connection = connections.dedicated("listener")) {
        try (Statement statement = connection.createStatement()) {
          statement.execute(listenSql);
        }
        // Rows committed while nobody listened would otherwise wait for the poll interval.
        wakeUps.wakeAll();
        listening = true;
        log.debug("pipeline {}: listening on channel {}", pipeline, channel);
        backoff = MIN_BACKOFF_MS;
        PGConnection pg = connection.unwrap(PGConnection.class);
        long probed = System.nanoTime();
        while (!stopping) {
          PGNotification[] received = pg.getNotifications(RECEIVE_TIMEOUT_MS);
          if (received != null && received.length > 0) {
            wakeUps.wakeAll();
          }
          if (System.nanoTime() - probed >= PROBE_INTERVAL_NANOS) {
            probe(connection);
            probed = System.nanoTime();
          }
        }
      } catch (SQLException e) {
        listening = false;
        if (stopping) {
          return;
        }
        log.warn(
            "pipeline {}: LISTEN {} on {} failed, polling every poll-interval meanwhile; retrying"
                + " in {} ms: {}",
            pipeline,
            channel,
            connections.safeUrl(),
            backoff,
            e.getMessage());
        try {
          TimeUnit.MILLISECONDS.sleep(backoff);
        } catch (InterruptedException interrupted) {
          return; // only close() interrupts this thread
        }
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      } finally {
        listening = false;
      }
    }
  }
}
