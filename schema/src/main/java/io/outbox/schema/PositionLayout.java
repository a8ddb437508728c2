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
