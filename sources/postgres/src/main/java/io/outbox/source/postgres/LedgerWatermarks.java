package io.outbox.source.postgres;

import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The SQL of the ledger watermark ({@code <table>_relay_ledger}, migration V5) of an exactly-once
 * pipeline: reading it, advancing it inside a settlement's transaction, and settling rows named by
 * ledger records (marked or deleted only when both the id and the event id match).
 */
public final class LedgerWatermarks {

  private final String read;
  private final String advance;
  private final String markPublished;
  private final String deletePublished;

  /** The statements for these tables. */
  public LedgerWatermarks(OutboxTables tables) {
    Objects.requireNonNull(tables, "tables");
    String ledger = tables.qualifiedLedgerTable();
    String outbox = tables.qualifiedTable();
    this.read = "SELECT ledger_partition, settled_offset FROM " + ledger + " WHERE pipeline = ?";
    // GREATEST: an older settlement that commits late never moves the watermark back.
    this.advance =
        "INSERT INTO "
            + ledger
            + " AS w (pipeline, ledger_partition, settled_offset, updated_at)"
            + " VALUES (?, ?, ?, clock_timestamp())"
            + " ON CONFLICT (pipeline, ledger_partition) DO UPDATE"
            + " SET settled_offset = GREATEST(w.settled_offset, EXCLUDED.settled_offset),"
            + " updated_at = EXCLUDED.updated_at";
    OutboxColumns c = tables.columns();
    String named =
        " ("
            + c.id("o")
            + ", "
            + c.eventId("o")
            + ") IN (SELECT * FROM unnest(?::bigint[], ?::uuid[]))";
    this.markPublished =
        "UPDATE "
            + outbox
            + " o SET published_at = clock_timestamp() WHERE"
            + named
            + " AND o.published_at IS NULL";
    this.deletePublished = "DELETE FROM " + outbox + " o WHERE" + named;
  }

  /** Per ledger partition, the pipeline's last settled offset. */
  public Map<Integer, Long> read(Connection c, String pipeline) throws SQLException {
    Map<Integer, Long> settled = new HashMap<>();
    try (PreparedStatement ps = c.prepareStatement(read)) {
      ps.setString(1, pipeline);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          settled.put(rs.getInt(1), rs.getLong(2));
        }
      }
    }
    return settled;
  }

  /** Advances the watermark of {@code partition} to {@code offset}, in the caller's transaction. */
  public void advance(Connection c, String pipeline, int partition, long offset)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(advance)) {
      ps.setString(1, pipeline);
      ps.setInt(2, partition);
      ps.setLong(3, offset);
      ps.executeUpdate();
    }
  }

  /** A source's check, in a transaction, that this instance is still the pipeline's active one. */
  @FunctionalInterface
  public interface Fence {
    /** Takes the fence lock shared (until the transaction ends) and checks the epoch. */
    boolean holds(Connection c) throws SQLException;
  }

  /**
   * Per ledger partition, the pipeline's last settled offset, read in a transaction on a connection
   * of {@code pool} only if {@code fence} holds: the database confirms this instance is still the
   * active one before anything acts on the ledger (issue #30: a lane's producer registered again,
   * or the ledger read, on the word of an instance cut off from the database).
   *
   * @return the offsets; {@code null} when the fence did not hold
   */
  public Map<Integer, Long> read(DataSource pool, Fence fence, String pipeline)
      throws SQLException {
    try (Connection c = connection(pool, pipeline)) {
      try {
        return fence.holds(c) ? read(c, pipeline) : null;
      } finally {
        c.rollback();
      }
    }
  }

  /**
   * In one transaction on a connection of {@code pool}, unless {@code fence} does not hold: settles
   * the rows one ledger record names ({@link #settle}) and advances the watermark of its partition
   * to its offset ({@link #advance}).
   *
   * @param eventIds by row id, the event ids the record names
   * @return how many rows changed; -1 when the fence did not hold and nothing was written
   */
  public int settleRecord(
      DataSource pool,
      Fence fence,
      String pipeline,
      int partition,
      long offset,
      Map<Long, UUID> eventIds,
      boolean delete)
      throws SQLException {
    try (Connection c = connection(pool, pipeline)) {
      boolean committed = false;
      try {
        if (!fence.holds(c)) {
          return -1;
        }
        int settled =
            settle(c, List.copyOf(eventIds.keySet()), List.copyOf(eventIds.values()), delete);
        advance(c, pipeline, partition, offset);
        c.commit();
        committed = true;
        return settled;
      } finally {
        if (!committed) {
          c.rollback();
        }
      }
    }
  }

  private static Connection connection(DataSource pool, String pipeline) throws SQLException {
    if (pool == null) {
      throw new IllegalStateException("pipeline " + pipeline + ": ledger used before activate()");
    }
    return pool.getConnection();
  }

  /**
   * Marks published (or deletes) the rows whose id and event id both match, in the caller's
   * transaction; rows already published are left alone.
   *
   * @return how many rows changed
   */
  public int settle(Connection c, List<Long> ids, List<UUID> eventIds, boolean delete)
      throws SQLException {
    if (ids.isEmpty()) {
      return 0;
    }
    Array idArray = c.createArrayOf("bigint", ids.toArray());
    Array eventIdArray = c.createArrayOf("uuid", eventIds.toArray());
    try (PreparedStatement ps = c.prepareStatement(delete ? deletePublished : markPublished)) {
      ps.setArray(1, idArray);
      ps.setArray(2, eventIdArray);
      return ps.executeUpdate();
    } finally {
      idArray.free();
      eventIdArray.free();
    }
  }
}
