package io.outbox.schema;

import static io.outbox.client.OutboxTables.fit;
import static io.outbox.client.OutboxTables.quote;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * What settlement by position ({@code on-publish = position}) needs of an outbox beyond the
 * migrations: an index on {@code tx}, through which a lane finds the rows of the transactions that
 * committed between two snapshots, an index of the exceptions (rows written unsettled: retries,
 * held back, delayed) in id order, which a claim reads first, and a check that every new row has a
 * {@code tx} (a row inserted with an explicit NULL would never be read). The check is {@code NOT
 * VALID}: it holds for every row inserted from now on without reading the rows already there (those
 * from before migration 8 have NULL, and the relay turns them into exceptions when the pipeline
 * starts settling by position). Only pipelines configured so get them; the others do not pay for
 * the index.
 *
 * <p>The index is built {@code CONCURRENTLY}: inserts go on while it builds. A build that failed
 * leaves an invalid index behind, which {@link #apply} drops and builds again.
 */
public final class PositionLayout {

  private PositionLayout() {}

  /**
   * An index settlement by position needs: its name is the table's (or a partition's) with {@code
   * suffix}, {@code definition} what follows {@code ON <table>}.
   */
  private record Index(String suffix, String definition) {

    String name(String table) {
      return fit(table, suffix);
    }

    /** {@code CREATE INDEX ... IF NOT EXISTS name ON on definition}. */
    String create(String name, String on, boolean concurrently) {
      return "CREATE INDEX "
          + (concurrently ? "CONCURRENTLY " : "")
          + "IF NOT EXISTS "
          + quote(name)
          + " ON "
          + on
          + " "
          + definition;
    }
  }

  /** The index of the exceptions (rows written unsettled) in id order, then the index on tx. */
  private static List<Index> indexes(OutboxTables tables) {
    return List.of(
        new Index(
            "_exception_idx",
            "("
                + quote(tables.columns().id())
                + ") WHERE published_at IS NULL AND next_attempt_at IS NOT NULL"),
        new Index("_tx_idx", "(tx)"));
  }

  /**
   * The statements, idempotent, in order; built {@code concurrently}, each runs on its own (outside
   * a transaction).
   */
  static List<String> statements(OutboxTables tables, boolean concurrently) {
    List<String> statements = new ArrayList<>();
    for (Index index : indexes(tables)) {
      statements.add(
          index.create(index.name(tables.table()), tables.qualifiedTable(), concurrently));
    }
    statements.add(check(tables));
    return statements;
  }

  /** Adds {@code CHECK (tx IS NOT NULL) NOT VALID} unless the table has it. */
  private static String check(OutboxTables tables) {
    String outbox = tables.qualifiedTable();
    String check = fit(tables.table(), "_tx_check");
    return "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = '"
        + outbox.replace("'", "''")
        + "'::regclass AND conname = '"
        + check.replace("'", "''")
        + "') THEN ALTER TABLE "
        + outbox
        + " ADD CONSTRAINT "
        + quote(check)
        + " CHECK (tx IS NOT NULL) NOT VALID; END IF; END $$";
  }

  /**
   * The same statements as a script's text, headed by a comment. The index is built as in a
   * migration file (a script may run in one transaction, where {@code CONCURRENTLY} cannot).
   */
  static String script(OutboxTables tables) {
    StringBuilder s =
        new StringBuilder(
            "\n-- on-publish = position: an index on tx, one of the exceptions and a check that new"
                + " rows have a tx. On a"
                + " large live outbox, CREATE INDEX blocks inserts while it builds: build them first"
                + " with CREATE INDEX CONCURRENTLY, the same name and definition (migrate does"
                + " so); IF NOT EXISTS then keeps it.\n");
    for (String statement : statements(tables, false)) {
      s.append(statement).append(";\n");
    }
    return s.toString();
  }

  /**
   * Creates what is missing, on a connection in autocommit mode (restored after). An index left
   * invalid by a failed build is dropped and built again.
   *
   * @return whether anything was created
   */
  static boolean apply(Connection c, OutboxTables tables) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(true);
    try (Statement s = c.createStatement()) {
      boolean partitioned = partitioned(c, tables);
      boolean changed = false;
      for (Index index : indexes(tables)) {
        String name = index.name(tables.table());
        String qualified = quote(tables.schema()) + "." + quote(name);
        Boolean valid = indexValid(c, qualified);
        if (Boolean.TRUE.equals(valid)) {
          continue;
        }
        changed = true;
        if (partitioned) {
          buildOnEachPartition(c, s, tables, index, qualified);
        } else {
          if (Boolean.FALSE.equals(valid)) {
            s.execute("DROP INDEX CONCURRENTLY IF EXISTS " + qualified);
          }
          s.execute(index.create(name, tables.qualifiedTable(), true));
        }
      }
      if (!checkPresent(c, tables)) {
        s.execute(check(tables));
        changed = true;
      }
      return changed;
    } finally {
      c.setAutoCommit(autoCommit);
    }
  }

  /**
   * A partitioned outbox cannot build an index {@code CONCURRENTLY}: the index is made on the
   * partitioned table alone ({@code ON ONLY}, invalid until every partition has its own), then
   * built {@code CONCURRENTLY} on each partition that has none attached and attached; one of a
   * partition left invalid by a failed build is dropped and built again. The partitioned table's
   * index turns valid with the last one attached.
   */
  private static void buildOnEachPartition(
      Connection c, Statement s, OutboxTables tables, Index index, String parent)
      throws SQLException {
    s.execute(index.create(index.name(tables.table()), "ONLY " + tables.qualifiedTable(), false));
    for (String[] partition : unindexedPartitions(c, tables, parent)) {
      String name = index.name(partition[1]);
      String child = quote(partition[0]) + "." + quote(name);
      if (Boolean.FALSE.equals(indexValid(c, child))) {
        s.execute("DROP INDEX CONCURRENTLY IF EXISTS " + child);
      }
      s.execute(index.create(name, quote(partition[0]) + "." + quote(partition[1]), true));
      s.execute("ALTER INDEX " + parent + " ATTACH PARTITION " + child);
    }
  }

  private static boolean partitioned(Connection c, OutboxTables tables) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass(?)")) {
      ps.setString(1, tables.qualifiedTable());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /** The outbox's partitions (schema, name) without an index attached to {@code parent}. */
  private static List<String[]> unindexedPartitions(
      Connection c, OutboxTables tables, String parent) throws SQLException {
    List<String[]> partitions = new ArrayList<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT n.nspname, p.relname FROM pg_inherits i"
                + " JOIN pg_class p ON p.oid = i.inhrelid"
                + " JOIN pg_namespace n ON n.oid = p.relnamespace"
                + " WHERE i.inhparent = to_regclass(?) AND NOT EXISTS ("
                + "SELECT 1 FROM pg_inherits a JOIN pg_index x ON x.indexrelid = a.inhrelid"
                + " WHERE a.inhparent = to_regclass(?) AND x.indrelid = p.oid)"
                + " ORDER BY p.relname")) {
      ps.setString(1, tables.qualifiedTable());
      ps.setString(2, parent);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          partitions.add(new String[] {rs.getString(1), rs.getString(2)});
        }
      }
    }
    return partitions;
  }

  /** Whether the index exists and is valid; null when it does not exist. */
  private static Boolean indexValid(Connection c, String index) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(?)")) {
      ps.setString(1, index);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getBoolean(1) : null;
      }
    }
  }

  private static boolean checkPresent(Connection c, OutboxTables tables) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass(?) AND conname = ?")) {
      ps.setString(1, tables.qualifiedTable());
      ps.setString(2, fit(tables.table(), "_tx_check"));
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }
}
