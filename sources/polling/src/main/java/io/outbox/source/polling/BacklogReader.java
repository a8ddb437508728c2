package io.outbox.source.polling;

import io.outbox.admin.OutboxStatus;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.SourceException;
import io.outbox.source.postgres.LanePositions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the pipeline's backlog figures ({@link OutboxStatus}) on a session of its own, opened on
 * first use and again after a failure, so that reading them never takes a claim connection.
 */
final class BacklogReader {
  private static final Logger log = LoggerFactory.getLogger(BacklogReader.class);

  private final Connections connections;
  private final OutboxStatus status;
  private final String pipeline;
  private final String table;
  private Connection session; // guarded by this
  private boolean closed; // guarded by this

  BacklogReader(Connections connections, TableNames tables, String pipeline) {
    this.connections = connections;
    this.status = LanePositions.status(tables.tables());
    this.pipeline = pipeline;
    this.table = tables.displayTable();
  }

  /**
   * @return the figures; empty once closed
   * @throws SourceException naming the table and the URL when the database fails
   */
  synchronized Optional<Backlog> read() {
    if (closed) {
      return Optional.empty();
    }
    try {
      if (session == null) {
        session = connections.dedicated("backlog");
      }
      OutboxStatus.Backlog b = status.backlog(session, pipeline);
      return Optional.of(
          new Backlog(
              b.pending(),
              b.oldestPendingAge(),
              b.retrying(),
              b.deadLetters(),
              b.lastError(),
              OptionalLong.empty()));
    } catch (SQLException e) {
      closeSession();
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": cannot read the backlog of "
              + table
              + " on "
              + connections.safeUrl()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** Closes the session; later reads answer nothing. */
  synchronized void close() {
    closed = true;
    closeSession();
  }

  private void closeSession() {
    if (session != null) {
      try {
        session.close();
      } catch (SQLException e) {
        log.debug("pipeline {}: closing the backlog session: {}", pipeline, e.getMessage());
      }
      session = null;
    }
  }
}
