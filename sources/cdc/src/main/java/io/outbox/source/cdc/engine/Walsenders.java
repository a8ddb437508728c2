package io.outbox.source.cdc.engine;

import io.outbox.source.postgres.RetentionJob.ConnectionSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;

/**
 * The server processes (walsenders) that streamed the slot to one session's engine, as PostgreSQL
 * sees them: noted while the session holds the lease and receives from the slot (only its engine
 * can be streaming it then), and asked for again once the engine was stopped, so that "its
 * replication connection is closed" is what the database says. A process is named by its pid and
 * start time, so that a pid the server hands out again later is not taken for it.
 */
final class Walsenders {

  private static final String STREAMING =
      "SELECT s.active_pid, a.backend_start FROM pg_replication_slots s"
          + " JOIN pg_stat_activity a ON a.pid = s.active_pid WHERE s.slot_name = ?";
  private static final String ALIVE =
      "SELECT 1 FROM pg_stat_activity WHERE pid = ? AND backend_start = ?";
  private static final String END =
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ? AND backend_start = ?";

  /** One walsender. */
  record Walsender(int pid, OffsetDateTime started) {
    @Override
    public String toString() {
      return "server process " + pid + " (since " + started + ")";
    }
  }

  private final ConnectionSource sessions;
  private final String slot;
  private final Set<Walsender> seen = new CopyOnWriteArraySet<>();

  /**
   * @param sessions opens a new session for each look
   */
  Walsenders(ConnectionSource sessions, String slot) {
    this.sessions = sessions;
    this.slot = slot;
  }

  /**
   * Notes the process streaming the slot now; call only while this session's engine streams it.
   *
   * @return that process if it is new to this session, else {@code null}
   */
  Walsender noteStreaming() throws SQLException {
    try (Connection c = sessions.open();
        PreparedStatement ps = c.prepareStatement(STREAMING)) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          Walsender w = new Walsender(rs.getInt(1), rs.getObject(2, OffsetDateTime.class));
          return seen.add(w) ? w : null;
        }
        return null;
      }
    }
  }

  /**
   * The processes noted that are still connected; those found gone are forgotten.
   *
   * @throws SQLException when the database cannot say
   */
  List<Walsender> stillConnected() throws SQLException {
    if (seen.isEmpty()) {
      return List.of();
    }
    List<Walsender> alive = new ArrayList<>();
    try (Connection c = sessions.open();
        PreparedStatement ps = c.prepareStatement(ALIVE)) {
      for (Walsender w : seen) {
        ps.setInt(1, w.pid());
        ps.setObject(2, w.started());
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            alive.add(w);
          } else {
            seen.remove(w);
          }
        }
      }
    }
    return alive;
  }

  /**
   * Ends the processes noted that are still connected: once the engine's side is stopped, one left
   * (its client gone without a word, not yet noticed by {@code wal_sender_timeout}) would otherwise
   * hold the slot.
   *
   * @return how many were ended
   */
  int endStillConnected() throws SQLException {
    if (seen.isEmpty()) {
      return 0;
    }
    // One look per process: the statement finds no row for one already gone.
    int ended = 0;
    try (Connection c = sessions.open();
        PreparedStatement ps = c.prepareStatement(END)) {
      for (Walsender w : seen) {
        ps.setInt(1, w.pid());
        ps.setObject(2, w.started());
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && rs.getBoolean(1)) {
            ended++;
          }
        }
      }
    }
    return ended;
  }
}
