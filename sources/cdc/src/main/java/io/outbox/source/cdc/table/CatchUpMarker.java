package io.outbox.source.cdc.table;

import io.outbox.client.OutboxTables;
import io.outbox.source.cdc.lease.Fence;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The marker of a new slot's {@link CatchUp} in the offsets table: written before the slot is
 * created ({@link #begin}), bounded by the highest id once the slot exists ({@link #pending}),
 * cleared once every caught-up row has a final verdict ({@link #clear}), so that an instance killed
 * in the middle resumes the catch-up at its next activation. Every write is fenced by the leader
 * lock's epoch.
 */
public final class CatchUpMarker {

  /** The marker's offset key: Debezium's keys are JSON arrays, never this. */
  static final byte[] MARKER = "outbox-relay catch-up".getBytes(StandardCharsets.UTF_8);

  private static final Pattern BOUND = Pattern.compile("\"up_to_id\"\\s*:\\s*(-?\\d+)");

  private CatchUpMarker() {}

  /** Before a new slot is created: a catch-up is due, its bound not known yet. */
  public static void begin(Connection c, Fence fence, OutboxTables tables, String p)
      throws SQLException {
    write(c, fence, tables, p, "{}");
  }

  /**
   * The bound of the pending catch-up, fixed at the highest id now when it has none yet (the slot
   * was created since); empty when no catch-up is pending. Call it once the slot exists.
   */
  public static OptionalLong pending(
      Connection c, Fence fence, OutboxTables tables, String pipeline) throws SQLException {
    String value = read(c, tables, pipeline);
    if (value == null) {
      return OptionalLong.empty();
    }
    Matcher m = BOUND.matcher(value);
    if (m.find()) {
      return OptionalLong.of(Long.parseLong(m.group(1)));
    }
    long max = highestId(c, tables);
    write(c, fence, tables, pipeline, "{\"up_to_id\":" + max + "}");
    return OptionalLong.of(max);
  }

  /** Every caught-up row is final: the catch-up is over. */
  static void clear(Connection c, Fence fence, OutboxTables tables, String pipeline)
      throws SQLException {
    write(c, fence, tables, pipeline, null);
  }

  /** The highest id in the outbox now; 0 when it is empty. */
  public static long highestId(Connection c, OutboxTables tables) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT coalesce(max("
                    + OutboxTables.quote(tables.columns().id())
                    + "), 0) FROM "
                    + tables.qualifiedTable())) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String read(Connection c, OutboxTables tables, String pipeline)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT offset_value FROM "
                + tables.qualifiedOffsetsTable()
                + " WHERE pipeline = ? AND offset_key = ? AND offset_value IS NOT NULL")) {
      ps.setString(1, pipeline);
      ps.setBytes(2, MARKER);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new String(rs.getBytes(1), StandardCharsets.UTF_8) : null;
      }
    }
  }

  /**
   * Writes the marker ({@code value}), or clears it ({@code null}: the row stays, valueless, as an
   * offset Debezium removed does; the role needs no DELETE), if this instance still leads.
   */
  private static void write(
      Connection c, Fence fence, OutboxTables tables, String pipeline, String value)
      throws SQLException {
    String sql =
        "INSERT INTO "
            + tables.qualifiedOffsetsTable()
            + " (pipeline, offset_key, offset_value, updated_at) VALUES (?, ?, ?, now())"
            + " ON CONFLICT (pipeline, offset_key) DO UPDATE"
            + " SET offset_value = excluded.offset_value, updated_at = now()";
    c.setAutoCommit(false);
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      fence.check(c);
      ps.setString(1, pipeline);
      ps.setBytes(2, MARKER);
      ps.setBytes(3, value == null ? null : value.getBytes(StandardCharsets.UTF_8));
      ps.executeUpdate();
      c.commit();
    } catch (SQLException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
  }
}
