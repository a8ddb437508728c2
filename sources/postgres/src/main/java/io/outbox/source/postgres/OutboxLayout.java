package io.outbox.source.postgres;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** What the sources need to know of the outbox's layout, read from the catalog. */
public final class OutboxLayout {

  private OutboxLayout() {}

  /** Whether the outbox is partitioned ({@code layout = partitioned}). */
  public static boolean partitioned(Connection c, OutboxTables tables) throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement("SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass(?)")) {
      s.setString(1, tables.qualifiedTable());
      try (ResultSet r = s.executeQuery()) {
        return r.next() && r.getBoolean(1);
      }
    }
  }
}
