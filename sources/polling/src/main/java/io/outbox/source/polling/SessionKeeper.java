package io.outbox.source.polling;

import io.outbox.relay.spi.support.PipelineThreads;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Keeps one dedicated session of the polling source open on its own named daemon thread, for the
 * work that needs a session of its own (listening for notifications, the wake gate): a session that
 * fails is reopened with backoff (500 ms doubling up to 30 s, back to 500 ms once the new one is
 * set up); {@link #close} interrupts the thread and waits for it.
 */
final class SessionKeeper {

  /** What runs on the kept session. */
  interface Session {

    /**
     * Works on {@code connection} until {@link SessionKeeper#stopping()}; calls {@code established}
     * once the session is set up (the next failure waits the shortest backoff).
     */
    void work(Connection connection, Runnable established)
        throws SQLException, InterruptedException;

    /** The session failed: whatever it held is gone. Called even while stopping. */
    void lost();

    /** The session failed while not stopping: it is reopened in {@code retryMs}. */
    void failed(SQLException e, long retryMs);
  }

  private static final long MIN_BACKOFF_MS = 500;
  private static final long MAX_BACKOFF_MS = 30_000;

  private final Connections connections;
  private final String sessionName;
  private final Session session;
  private final Thread thread;
  private volatile boolean stopping;
  private long backoff = MIN_BACKOFF_MS; // only the thread's

  /**
   * @param sessionName the dedicated session's name ({@link Connections#dedicated})
   * @param pipeline the pipeline, for the thread's logging context
   * @param threadName the thread's name
   */
  SessionKeeper(
      Connections connections,
      String sessionName,
      String pipeline,
      String threadName,
      Session session) {
    this.connections = connections;
    this.sessionName = sessionName;
    this.session = session;
    this.thread = PipelineThreads.daemon(pipeline, threadName, this::run);
  }

  void start() {
    thread.start();
  }

  /** Whether {@link #close} was called: the work ends. */
  boolean stopping() {
    return stopping;
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

  private void run() {
    while (!stopping) {
      try (Connection connection = connections.dedicated(sessionName)) {
        session.work(connection, () -> backoff = MIN_BACKOFF_MS);
      } catch (SQLException e) {
        session.lost();
        if (stopping) {
          return;
        }
        session.failed(e, backoff);
        try {
          TimeUnit.MILLISECONDS.sleep(backoff);
        } catch (InterruptedException interrupted) {
          return; // only close() interrupts this thread
        }
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      } catch (InterruptedException e) {
        return; // only close() interrupts this thread
      }
    }
  }
}
