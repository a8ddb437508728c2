package io.outbox.source.cdc.stream;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Set;

/**
 * Which transactions a PostgreSQL snapshot ({@code pg_current_snapshot()}, as text {@code
 * xmin:xmax:xip,...}, 64-bit ids) counts as still in progress. The stream names a transaction by
 * its 32-bit id; it is placed in the 64-bit space at the one value with those low 32 bits within
 * 2^31 of the snapshot's {@code xmax}, as PostgreSQL places it: every transaction id in use lies
 * there.
 */
public final class TransactionSnapshot {

  private static final long LOW = 0xFFFF_FFFFL;
  private static final long HALF = 1L << 31;

  private final long xmin;
  private final long xmax;
  private final Set<Long> running = new HashSet<>();

  private TransactionSnapshot(long xmin, long xmax) {
    this.xmin = xmin;
    this.xmax = xmax;
  }

  /** The database's current snapshot, read on {@code c} (PostgreSQL 13 or later). */
  public static TransactionSnapshot current(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_current_snapshot()::text")) {
      rs.next();
      return parse(rs.getString(1));
    }
  }

  /** Parses {@code pg_current_snapshot()::text}. */
  static TransactionSnapshot parse(String text) {
    String[] parts = text.split(":", -1);
    if (parts.length != 3) {
      throw new IllegalArgumentException("not a pg_snapshot: " + text);
    }
    TransactionSnapshot s =
        new TransactionSnapshot(Long.parseLong(parts[0]), Long.parseLong(parts[1]));
    if (!parts[2].isEmpty()) {
      for (String xip : parts[2].split(",")) {
        s.running.add(Long.parseLong(xip));
      }
    }
    return s;
  }

  /** Whether the transaction the stream names {@code txId} had not ended at the snapshot. */
  public boolean inProgress(long txId) {
    long full = full(txId);
    return full >= xmin && (full >= xmax || running.contains(full));
  }

  /** {@code txId}'s 64-bit id: the value with its low 32 bits nearest to {@code xmax}. */
  long full(long txId) {
    long delta = ((txId & LOW) - (xmax & LOW)) & LOW; // 0 .. 2^32 - 1
    if (delta >= HALF) {
      delta -= 1L << 32;
    }
    return xmax + delta;
  }
}
