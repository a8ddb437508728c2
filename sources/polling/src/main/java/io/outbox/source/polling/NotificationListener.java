package io.outbox.source.polling;

import io.outbox.relay.spi.Ticker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
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
 *
 * <p>The insert trigger (migration V7) notifies only while some relay's listener holds, or waits
 * for, the advisory lock {@code (wake key, 3)} exclusively; otherwise inserts skip the {@code
 * NOTIFY} and hold {@code (key, 3)} shared until they end. So after its {@code LISTEN} this session
 * takes {@code (key, 3)}, which waits for every such transaction, and then wakes every lane once.
 * While another relay's listener holds it (a second pipeline on the table, an earlier instance),
 * inserts notify anyway, and this session only looks every half second whether it is free.
 */
final class NotificationListener {

  private static final Logger log = LoggerFactory.getLogger(NotificationListener.class);
  private static final int RECEIVE_TIMEOUT_MS = 500;

  /** How often a session without {@code (key, 3)} asks for it again. */
  private static final long PRESENCE_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /**
   * How long one request for {@code (key, 3)} waits for transactions that skipped their
   * notification; a longer one (an application transaction open for long) is waited for in turns,
   * receiving notifications between them.
   */
  private static final int PRESENCE_WAIT_MS = 500;

  /** PostgreSQL's SQLSTATE for lock_timeout. */
  private static final String LOCK_NOT_AVAILABLE = "55P03";

  /**
   * How often the session is checked with a query. Waiting for notifications never fails on a
   * silent connection (the driver treats its own wait as "nothing yet"), so without this a session
   * the network lost would listen to nothing, undetected; the query fails within socket-timeout.
   */
  private static final long PROBE_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final Connections connections;
  private final String listenSql;
  private final String channel;
  private final int wakeKey;
  private final WakeUps wakeUps;
  private final String pipeline;
  private final SessionKeeper keeper;
  private final Ticker ticker;
  private volatile boolean listening;
  private volatile boolean present;

  NotificationListener(
      Connections connections,
      String listenSql,
      String channel,
      int wakeKey,
      WakeUps wakeUps,
      String pipeline,
      Ticker ticker) {
    this.connections = connections;
    this.ticker = ticker;
    this.listenSql = listenSql;
    this.channel = channel;
    this.wakeKey = wakeKey;
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

  /**
   * Whether this session holds {@code (key, 3)}, so that inserts notify because of it (tests and
   * diagnostics); another relay's listener may hold it instead.
   */
  boolean present() {
    return present;
  }

  void close(Duration timeout) {
    keeper.close(timeout);
  }

  private static void probe(Connection connection) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute("SELECT 1");
    }
  }

  /**
   * Takes {@code (key, 3)} unless another session holds it: waits up to {@link #PRESENCE_WAIT_MS}
   * for the transactions that skipped their notification (meanwhile new inserts notify, as a try
   * fails behind a waiting request). Whether it took it.
   */
  private boolean takePresence(Connection connection) throws SQLException {
    String held =
        "SELECT EXISTS (SELECT 1 FROM pg_locks l WHERE " + WakeLocks.heldExclusively(3) + ")";
    try (PreparedStatement ps = connection.prepareStatement(held)) {
      ps.setLong(1, WakeLocks.classid(wakeKey));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        if (rs.getBoolean(1)) {
          return false; // another relay listens: inserts notify for it, and for this session
        }
      }
    }
    try (PreparedStatement ps = connection.prepareStatement("SELECT pg_advisory_lock(?, 3)")) {
      ps.setInt(1, wakeKey);
      ps.execute();
      return true;
    } catch (SQLException e) {
      if (LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
        return false; // a skipper still open, or another listener came first: next turn
      }
      throw e;
    }
  }

  private final class Listening implements SessionKeeper.Session {

    @Override
    public void work(Connection connection, Runnable established) throws SQLException {
      try {
        try (Statement statement = connection.createStatement()) {
          statement.execute(listenSql);
          statement.execute("SET lock_timeout = " + PRESENCE_WAIT_MS);
        }
        // Rows committed while nobody listened would otherwise wait for the poll interval.
        wakeUps.wakeAll();
        listening = true;
        log.debug("pipeline {}: listening on channel {}", pipeline, channel);
        established.run();
        PGConnection pg = connection.unwrap(PGConnection.class);
        long probed = ticker.nanoTime();
        long presenceTried = probed - PRESENCE_RETRY_NANOS;
        while (!keeper.stopping()) {
          if (!present && ticker.nanoTime() - presenceTried >= PRESENCE_RETRY_NANOS) {
            present = takePresence(connection);
            presenceTried = ticker.nanoTime();
            if (present) {
              // Every transaction that skipped its notification has ended: look for its rows.
              wakeUps.wakeAll();
              log.debug("pipeline {}: inserts into the outbox notify this listener", pipeline);
            }
          }
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
        present = false; // released with the session
      }
    }

    @Override
    public void lost() {
      listening = false;
      present = false;
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
