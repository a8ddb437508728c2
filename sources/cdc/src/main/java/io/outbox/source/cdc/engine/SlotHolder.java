package io.outbox.source.cdc.engine;

import io.outbox.source.cdc.CdcConnections;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Names, for a log line, the session that streams a replication slot: its pid, application, client
 * address and since when; or that no session streams it.
 */
final class SlotHolder {

  private static final String SQL =
      "SELECT s.active, s.active_pid, a.application_name, a.client_addr::text, a.client_port,"
          + " a.backend_start, s.confirmed_flush_lsn::text"
          + " FROM pg_replication_slots s LEFT JOIN pg_stat_activity a ON a.pid = s.active_pid"
          + " WHERE s.slot_name = ?";

  private final CdcConnections connections;
  private final String slot;

  SlotHolder(CdcConnections connections, String slot) {
    this.connections = connections;
    this.slot = slot;
  }

  /** One sentence; never throws (a failure to look is said instead). */
  String describe() {
    try (Connection c = connections.dedicated("check");
        PreparedStatement ps = c.prepareStatement(SQL)) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return "slot " + slot + " does not exist";
        }
        if (!rs.getBoolean(1)) {
          return "slot "
              + slot
              + " is not streamed by any session (confirmed up to "
              + rs.getString(7)
              + "): the engine is not streaming";
        }
        return "slot "
            + slot
            + " is streamed by server process "
            + rs.getInt(2)
            + " (application '"
            + rs.getString(3)
            + "', client "
            + rs.getString(4)
            + ":"
            + rs.getInt(5)
            + ", since "
            + rs.getObject(6, java.time.OffsetDateTime.class)
            + "), which sends this instance nothing";
      }
    } catch (SQLException | RuntimeException e) {
      return "cannot read who streams slot " + slot + ": " + e.getMessage();
    }
  }
}
