package io.outbox.schema;

import static io.outbox.client.OutboxTables.fit;
import static io.outbox.client.OutboxTables.quote;

import io.outbox.client.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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

  /** The index of the exceptions (rows written unsettled) in id order's name, unquoted. */
  static String exceptionIndexName(OutboxTables tables) {
    return fit(tables.table(), "_exception_idx");
  }

  /** The index on {@code tx}'s name, unquoted. */
  static String indexName(OutboxTables tables) {
    return fit(tables.table(), "_tx_idx");
  }

  /**
   * The statements, idempotent, in order; built {@code concurrently}, each runs on its own (outside
   * a transaction).
   */
  static List<String> statements(OutboxTables tables, boolean concurrently) {
    String outbox = tables.qualifiedTable();
    String check = fit(tables.table(), "_tx_check");
    String id = quote(tables.columns().id());
    return List.of(
        "CREATE INDEX "
            + (concurrently ? "CONCURRENTLY " : "")
            + "IF NOT EXISTS "
            + quote(exceptionIndexName(tables))
            + " ON "
            + outbox
            + " ("
            + id
            + ") WHERE published_at IS NULL AND next_attempt_at IS NOT NULL",
        "CREATE INDEX "
            + (concurrently ? "CONCURRENTLY " : "")
            + "IF NOT EXISTS "
            + quote(indexName(tables))
            + " ON "
            + outbox
            + " (tx)",
        "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = '"
            + outbox.replace("'", "''")
            + "'::regclass AND conname = '"
            + check.replace("'", "''")
            + "') THEN ALTER TABLE "
            + outbox
            + " ADD CONSTRAINT "
            + quote(check)
            + " CHECK (tx IS NOT NULL) NOT VALID; END IF; END $$");
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
   * Creates what is missing, on a connection in autocommit mode (restored after).
   *
   * @return whether anything was created
   */
  static boolean apply(Connection c, OutboxTables tables) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(true);
    try {
      String index = quote(tables.schema()) + "." + quote(indexName(tables));
      String exceptions = quote(tables.schema()) + "." + quote(exceptionIndexName(tables));
      if (partitioned(c, tables)) {
        return applyPartitioned(c, tables);
      }
      Boolean valid = indexValid(c, index);
      Boolean exceptionsValid = indexValid(c, exceptions);
      if (Boolean.TRUE.equals(valid)
          && Boolean.TRUE.equals(exceptionsValid)
          && checkPresent(c, tables)) {
        return false;
      }
      try (Statement s = c.createStatement()) {
        if (Boolean.FALSE.equals(valid)) {
          s.execute("DROP INDEX CONCURRENTLY IF EXISTS " + index);
        }
        if (Boolean.FALSE.equals(exceptionsValid)) {
          s.execute("DROP INDEX CONCURRENTLY IF EXISTS " + exceptions);
        }
        for (String statement : statements(tables, true)) {
          s.execute(statement);
        }
      }
      return true;
    } finally {
      c.setAutoCommit(autoCommit);
    }
  }

  /**
   * A partitioned outbox cannot build an index {@code CONCURRENTLY}: each index is made on the
   * partitioned table alone ({@code ON ONLY}, invalid until every partition has its own), then
   * built {@code CONCURRENTLY} on each partition and attached. An index attached already is kept,
   * and one of a partition left invalid by a failed build is dropped and built again; the
   * partitioned table's index turns valid with the last one attached.
   */
  private static boolean applyPartitioned(Connection c, OutboxTables tables) throws SQLException {
    boolean changed = false;
    List<String> statements = statements(tables, false);
    String[][] indexes = {
      {exceptionIndexName(tables), "_exception_idx", statements.get(0)},
      {indexName(tables), "_tx_idx", statements.get(1)}
    };
    try (Statement s = c.createStatement()) {
      for (String[] index : indexes) {
        String parent = quote(tables.schema()) + "." + quote(index[0]);
        if (Boolean.TRUE.equals(indexValid(c, parent))) {
          continue;
        }
        changed = true;
        String on = " ON " + tables.qualifiedTable() + " ";
        String definition = index[2].substring(index[2].indexOf(on) + on.length());
        s.execute(index[2].replace(on, " ON ONLY " + tables.qualifiedTable() + " "));
        for (String[] partition : unindexedPartitions(c, tables, parent)) {
          String child = quote(partition[0]) + "." + quote(fit(partition[1], index[1]));
          if (Boolean.FALSE.equals(indexValid(c, child))) {
            s.execute("DROP INDEX CONCURRENTLY IF EXISTS " + child);
          }
          s.execute(
              "CREATE INDEX CONCURRENTLY IF NOT EXISTS "
                  + quote(fit(partition[1], index[1]))
                  + " ON "
                  + quote(partition[0])
                  + "."
                  + quote(partition[1])
                  + " "
                  + definition);
          s.execute("ALTER INDEX " + parent + " ATTACH PARTITION " + child);
        }
      }
      if (!checkPresent(c, tables)) {
        s.execute(statements.get(2));
        changed = true;
      }
    }
    return changed;
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
    List<String[]> partitions = new java.util.ArrayList<>();
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
