package io.outbox.source.polling;

import io.outbox.relay.spi.Ticker;
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
 * reopened with backoff ({@link SessionKeeper}); meanwhile lanes fall back to the poll interval.
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

  private final Connections connections;
  private final String listenSql;
  private final String channel;
  private final WakeUps wakeUps;
  private final String pipeline;
  private final SessionKeeper keeper;
  private final Ticker ticker;
  private volatile boolean listening;

  NotificationListener(
      Connections connections,
      String listenSql,
      String channel,
      WakeUps wakeUps,
      String pipeline,
      Ticker ticker) {
    this.connections = connections;
    this.ticker = ticker;
    this.listenSql = listenSql;
    this.channel = channel;
    this.wakeUps = wakeUps;
    this.pipeline = pipeline;
    this.keeper =
        new SessionKeeper(
            connections,
            "listener",
            pipeline,
            "outbox-relay-" + pipeline + "-polling-listener",
            new Listening());
  }

  void start() {
    keeper.start();
  }

  /** Whether the session is currently listening (for tests and diagnostics). */
  boolean listening() {
    return listening;
  }

  void close(Duration timeout) {
    keeper.close(timeout);
  }

  private static void probe(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute("SELECT 1");
    }
  }

  private final class Listening implements SessionKeeper.Session {

    @Override
    public void work(Connection connection, Runnable established) throws SQLException {
      try {
        try (Statement statement = connection.createStatement()) {
          statement.execute(listenSql);
        }
        // Rows committed while nobody listened would otherwise wait for the poll interval.
        wakeUps.wakeAll();
        listening = true;
        log.debug("pipeline {}: listening on channel {}", pipeline, channel);
        established.run();
        PGConnection pg = connection.unwrap(PGConnection.class);
        long probed = ticker.nanoTime();
        while (!keeper.stopping()) {
          PGNotification[] received = pg.getNotifications(RECEIVE_TIMEOUT_MS);
          if (received != null && received.length > 0) {
            wakeUps.wakeAll();
          }
          if (ticker.nanoTime() - probed >= PROBE_INTERVAL_NANOS) {
            probe(connection);
            probed = ticker.nanoTime();
          }
        }
      } finally {
        listening = false;
      }
    }

    @Override
    public void lost() {
      listening = false;
    }

    @Override
    public void failed(SQLException e, long retryMs) {
      log.warn(
          "pipeline {}: LISTEN {} on {} failed, polling every poll-interval meanwhile; retrying"
              + " in {} ms: {}",
          pipeline,
          channel,
          connections.safeUrl(),
          retryMs,
          e.getMessage());
    }
  }
}
