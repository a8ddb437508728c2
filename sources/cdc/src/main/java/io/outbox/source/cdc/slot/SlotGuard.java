package io.outbox.source.cdc.slot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Backlog;
import io.outbox.relay.spi.SourceException;
import io.outbox.source.cdc.CdcSettings;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks, before the engine starts, everything the stream needs and that PostgreSQL would report
 * less clearly: {@code wal_level}, the role's REPLICATION privilege, the publication ({@link
 * Publication}), and the replication slot against the stored offsets — a missing or re-created slot
 * while offsets exist is never a silent restart from "now". Also reports the WAL the slot retains.
 */
final class SlotGuard {

  private static final Logger log = LoggerFactory.getLogger(SlotGuard.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What the check found about the slot. */
  enum SlotState {
    /** The slot exists and matches the stored offsets (or none are stored). */
    READY,
    /** The slot does not exist and no offsets are stored: the source creates it. */
    NEW
  }

  private final CdcSettings settings;
  private final OutboxTables tables;
  private final String pipeline;
  private final String where;
  private final Publication publication;

  SlotGuard(CdcSettings settings, OutboxTables tables, String pipeline, String where) {
    this.settings = settings;
    this.tables = tables;
    this.pipeline = pipeline;
    this.where = where;
    this.publication = new Publication(settings, tables, pipeline, where);
  }

  /**
   * The publication and the slot against the stored offsets; run by the active instance only.
   *
   * @throws SourceException naming what is missing and how to fix it
   */
  SlotState check(Connection c) throws SQLException {
    publication.check(c);
    return checkSlot(c);
  }

  /**
   * What any instance can check before it competes for leadership: {@code wal_level} and the role's
   * REPLICATION privilege.
   *
   * @throws SourceException naming what is missing and how to fix it
   */
  void preflight(Connection c) throws SQLException {
    String walLevel = single(c, "SHOW wal_level");
    if (!"logical".equals(walLevel)) {
      throw fail(
          "wal_level is '"
              + walLevel
              + "' on "
              + where
              + "; the cdc source needs wal_level = logical"
              + " (ALTER SYSTEM SET wal_level = logical, then restart PostgreSQL)");
    }
    String replication =
        single(
            c,
            "SELECT (rolreplication OR rolsuper)::text FROM pg_roles WHERE rolname = current_user");
    if (!"true".equals(replication)) {
      throw fail(
          "the database user "
              + single(c, "SELECT current_user")
              + " lacks the REPLICATION privilege the cdc source needs"
              + " (ALTER ROLE <user> WITH REPLICATION)");
    }
  }

  private SlotState checkSlot(Connection c) throws SQLException {
    String slot = settings.slotName();
    Long storedLsn = storedLsn(c);
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT plugin, database, active, active_pid,"
                + " pg_wal_lsn_diff(confirmed_flush_lsn, '0/0')::bigint, current_database(),"
                + " wal_status, current_setting('max_slot_wal_keep_size')"
                + " FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, slot);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          if (storedLsn != null) {
            return slotLost(c, "is missing", storedLsn);
          }
          if (!settings.createSlot()) {
            throw fail(
                "replication slot "
                    + slot
                    + " does not exist on "
                    + where
                    + " and create-slot is false; create it with SELECT"
                    + " pg_create_logical_replication_slot('"
                    + slot
                    + "', 'pgoutput')");
          }
          return SlotState.NEW;
        }
        if (!"pgoutput".equals(rs.getString(1))) {
          throw fail(
              "replication slot " + slot + " uses plugin " + rs.getString(1) + ", not pgoutput");
        }
        if (!rs.getString(6).equals(rs.getString(2))) {
          throw fail(
              "replication slot "
                  + slot
                  + " belongs to database "
                  + rs.getString(2)
                  + ", not "
                  + rs.getString(6));
        }
        if ("lost".equals(rs.getString(7))) {
          // Invalidated: its WAL passed max_slot_wal_keep_size and was removed; the engine could
          // never stream from it again.
          return slotLost(
              c,
              "was invalidated (wal_status = 'lost': the WAL it needed passed"
                  + " max_slot_wal_keep_size = "
                  + rs.getString(8)
                  + " and was removed)",
              storedLsn);
        }
        if (rs.getBoolean(3)) {
          throw fail(
              "replication slot "
                  + slot
                  + " is in use by server process "
                  + rs.getInt(4)
                  + "; another consumer reads it (a slot admits one)");
        }
        long confirmed = rs.getLong(5);
        if (storedLsn != null && confirmed > storedLsn) {
          return slotLost(
              c,
              "was re-created or moved past the stored offset (slot at "
                  + lsn(confirmed)
                  + ", offsets at "
                  + lsn(storedLsn)
                  + ")",
              storedLsn);
        }
        return SlotState.READY;
      }
    }
  }

  private SlotState slotLost(Connection c, String what, Long storedLsn) throws SQLException {
    String message =
        "replication slot "
            + settings.slotName()
            + " "
            + what
            + (storedLsn == null
                ? ""
                : " while offsets are stored in "
                    + tables.displayOffsetsTable()
                    + " for pipeline "
                    + pipeline
                    + " (up to "
                    + lsn(storedLsn)
                    + ")")
            + "; changes in between are not in the stream";
    if (settings.onSlotLoss() == CdcSettings.OnSlotLoss.FAIL) {
      throw fail(
          message
              + ". Set source.cdc.on-slot-loss = recreate to stream from a new slot (the rows left"
              + " unpublished are then caught up from the table first), or restore the slot");
    }
    log.error(
        "pipeline {}: {}. on-slot-loss = recreate: forgetting the offsets and streaming from a new"
            + " slot; the rows left unpublished are caught up from the table ahead of its stream",
        pipeline,
        message);
    try (PreparedStatement ps =
        c.prepareStatement(
            "DELETE FROM " + tables.qualifiedOffsetsTable() + " WHERE pipeline = ?")) {
      ps.setString(1, pipeline);
      ps.executeUpdate();
    }
    if (what.startsWith("was")) {
      try (PreparedStatement ps = c.prepareStatement("SELECT pg_drop_replication_slot(?)")) {
        ps.setString(1, settings.slotName());
        ps.execute();
      }
    }
    return SlotState.NEW;
  }

  /** The highest LSN in the stored offsets of the pipeline, or {@code null} when none. */
  private Long storedLsn(Connection c) throws SQLException {
    Long max = null;
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT offset_value FROM "
                + tables.qualifiedOffsetsTable()
                + " WHERE pipeline = ? AND offset_value IS NOT NULL")) {
      ps.setString(1, pipeline);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Long lsn = maxLsn(rs.getBytes(1));
          if (lsn != null && (max == null || lsn > max)) {
            max = lsn;
          }
        }
      }
    } catch (SQLException e) {
      if ("42P01".equals(e.getSQLState())) {
        throw fail("table " + tables.displayOffsetsTable() + " does not exist; run `migrate`");
      }
      throw e;
    }
    return max;
  }

  /** The largest {@code lsn*} number of a Debezium PostgreSQL offset (JSON). */
  static Long maxLsn(byte[] offset) {
    try {
      JsonNode node = JSON.readTree(offset);
      Long max = null;
      for (Map.Entry<String, JsonNode> f : node.properties()) {
        if (f.getKey().startsWith("lsn") && f.getValue().canConvertToLong()) {
          long v = f.getValue().asLong();
          max = max == null || v > max ? v : max;
        }
      }
      return max;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * The WAL the slot keeps from being recycled, in bytes ({@code pg_current_wal_lsn() -
   * restart_lsn}), or -1 when the slot does not exist.
   */
  long retainedWalBytes(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint"
                + " FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, settings.slotName());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : -1;
      }
    }
  }

  /**
   * The slot's retained WAL as a share of {@code max_slot_wal_keep_size}: at 1 the server
   * invalidates the slot at its next checkpoint. Empty without a slot or without a limit (-1).
   */
  OptionalDouble walKeepShare(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), s.restart_lsn)::float8"
                + " / (k.setting::bigint * 1048576)"
                + " FROM pg_replication_slots s, pg_settings k"
                + " WHERE s.slot_name = ? AND s.restart_lsn IS NOT NULL"
                + " AND k.name = 'max_slot_wal_keep_size' AND k.setting::bigint > 0")) {
      ps.setString(1, settings.slotName());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? OptionalDouble.of(rs.getDouble(1)) : OptionalDouble.empty();
      }
    }
  }

  /**
   * What waits in the outbox now, with the slot's retained WAL: the figures of {@code status} and
   * the backlog gauges.
   */
  Backlog backlog(Connection c) throws SQLException {
    // The same figures as the polling source's and `status`: one statement, index walks only.
    OutboxStatus.Backlog b = new OutboxStatus(tables).backlog(c, pipeline);
    Backlog backlog =
        new Backlog(
            b.pending(),
            b.oldestPendingAge(),
            b.retrying(),
            b.deadLetters(),
            b.lastError() == null ? null : b.lastError().replaceAll("[\\r\\n]+", " "),
            OptionalLong.empty());
    long retained = retainedWalBytes(c);
    return retained < 0 ? backlog : backlog.withRetainedWalBytes(retained);
  }

  static String lsn(long value) {
    return Long.toHexString(value >>> 32).toUpperCase()
        + "/"
        + Long.toHexString(value & 0xffffffffL).toUpperCase();
  }

  private static String single(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? String.valueOf(rs.getString(1)) : "";
    }
  }

  private SourceException fail(String message) {
    return new SourceException("pipeline " + pipeline + ": " + message);
  }
}
