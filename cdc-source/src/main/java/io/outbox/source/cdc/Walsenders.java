package io.outbox.source.cdc;

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

  /** One walsender. */
  record Walsender(int pid, OffsetDateTime started) {
    @Override
    public String toString() {
      return "server process " + pid + " (since " + started + ")";
    }
  }

  private final CdcConnections connections;
  private final String slot;
  private final Set<Walsender> seen = new CopyOnWriteArraySet<>();

  Walsenders(CdcConnections connections, String slot) {
    this.connections = connections;
    this.slot = slot;
  }

  /** Notes the process streaming the slot now; call only while this session's engine streams it. */
  void noteStreaming() throws SQLException {
    try (Connection c = connections.dedicated("check");
        PreparedStatement ps = c.prepareStatement(STREAMING)) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          seen.add(new Walsender(rs.getInt(1), rs.getObject(2, OffsetDateTime.class)));
        }
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
    try (Connection c = connections.dedicated("check");
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
}
