package io.outbox.source.cdc.slot;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.SourceException;
import io.outbox.source.cdc.CdcSettings;
import io.outbox.source.cdc.engine.ChangeEvents;
import io.outbox.source.postgres.OutboxLayout;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pipeline's publication: created when allowed, for the outbox table's INSERTs and, on
 * PostgreSQL 15 and later, only the columns the stream carries ({@link ChangeEvents#columns}: the
 * walsender then neither renders nor sends the payload, which a claim reads from the table); an
 * existing one must publish the outbox table with those columns.
 */
final class Publication {

  private static final Logger log = LoggerFactory.getLogger(Publication.class);

  /** The first PostgreSQL major version with publication column lists. */
  static final int COLUMN_LISTS = 15;

  private final CdcSettings settings;
  private final OutboxTables tables;
  private final String pipeline;
  private final String where;

  /** The columns the stream carries, under the table's names. */
  private final List<String> columns;

  Publication(CdcSettings settings, OutboxTables tables, String pipeline, String where) {
    this.settings = settings;
    this.tables = tables;
    this.pipeline = pipeline;
    this.where = where;
    this.columns = ChangeEvents.columns(tables.columns());
  }

  /**
   * Creates the publication, or checks the one there.
   *
   * @throws SourceException naming what is missing and how to fix it
   */
  void check(Connection c) throws SQLException {
    String publication = settings.publicationName();
    // The driver knows the server's version from the connection's start: no query.
    boolean columnLists = c.getMetaData().getDatabaseMajorVersion() >= COLUMN_LISTS;
    String columnList = columnList(c);
    boolean partitioned = OutboxLayout.partitioned(c, tables);
    // A partitioned outbox's inserts reach the stream under the table's name, not a partition's.
    String create =
        "CREATE PUBLICATION \""
            + publication
            + "\" FOR TABLE "
            + tables.qualifiedTable()
            + (columnLists ? " (" + columnList + ")" : "")
            + " WITH (publish = 'insert'"
            + (partitioned ? ", publish_via_partition_root = true" : "")
            + ")";
    if (!exists(c, publication)) {
      if (!settings.createPublication()) {
        throw fail(
            "publication "
                + publication
                + " does not exist on "
                + where
                + " and create-publication is false; create it with "
                + create);
      }
      try (Statement st = c.createStatement()) {
        st.execute(create);
      } catch (SQLException e) {
        throw fail(
            "cannot create publication "
                + publication
                + " for "
                + tables.displayTable()
                + " (the user must own the table, or a DBA creates the publication): "
                + e.getMessage());
      }
      log.info(
          "pipeline {}: created publication {} for {} (inserts only{})",
          pipeline,
          publication,
          tables.displayTable(),
          columnLists ? ", columns " + String.join(", ", columns) : "");
      return;
    }
    if (partitioned && !viaRoot(c, publication)) {
      throw fail(
          "publication "
              + publication
              + " publishes the partitions of "
              + tables.displayTable()
              + " under their own names, which the stream does not read; ALTER PUBLICATION "
              + publication
              + " SET (publish_via_partition_root = true)");
    }
    List<String> published = publishedColumns(c, publication, columnLists);
    if (published == null) {
      throw fail(
          "publication "
              + publication
              + " does not include "
              + tables.displayTable()
              + "; ALTER PUBLICATION "
              + publication
              + " ADD TABLE "
              + tables.displayTable());
    }
    if (!columnLists) {
      return;
    }
    List<String> missing = new ArrayList<>(columns);
    missing.removeAll(published);
    String alter =
        "ALTER PUBLICATION "
            + publication
            + " SET TABLE "
            + tables.qualifiedTable()
            + " ("
            + columnList
            + ")";
    if (!missing.isEmpty()) {
      throw fail(
          "publication "
              + publication
              + " publishes columns "
              + published
              + " of "
              + tables.displayTable()
              + ", not "
              + missing
              + ", which the stream needs; "
              + alter);
    }
    if (published.size() > columns.size()) {
      log.info(
          "pipeline {}: publication {} sends {} columns of {} for every event where the stream"
              + " reads {}: the relay reads the rest from the table, so the walsender and the"
              + " engine decode them for nothing. If the publication is the relay's alone: {}",
          pipeline,
          publication,
          published.size(),
          tables.displayTable(),
          columns.size(),
          alter);
    }
  }

  /**
   * {@link #columns} as a statement's column list, each name quoted where PostgreSQL needs it
   * ({@code quote_ident}: a mapped name such as {@code AggregateId}, or a keyword).
   */
  private String columnList(Connection c) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT string_agg(quote_ident(n), ', ' ORDER BY i)"
                + " FROM unnest(?::text[]) WITH ORDINALITY AS u(n, i)")) {
      ps.setArray(1, c.createArrayOf("text", columns.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  private static boolean viaRoot(Connection c, String publication) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT pubviaroot FROM pg_publication WHERE pubname = ?")) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  private static boolean exists(Connection c, String publication) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT 1 FROM pg_publication WHERE pubname = ?")) {
      ps.setString(1, publication);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /**
   * The outbox table's published columns (all of them before PostgreSQL 15), or {@code null} when
   * the publication does not include the table.
   */
  private List<String> publishedColumns(Connection c, String publication, boolean columnLists)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT "
                + (columnLists ? "attnames" : "NULL::text[]")
                + " FROM pg_publication_tables"
                + " WHERE pubname = ? AND schemaname = ? AND tablename = ?")) {
      ps.setString(1, publication);
      ps.setString(2, tables.schema());
      ps.setString(3, tables.table());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        Array names = rs.getArray(1);
        return names == null ? List.of() : Arrays.asList((String[]) names.getArray());
      }
    }
  }

  private SourceException fail(String message) {
    return new SourceException("pipeline " + pipeline + ": " + message);
  }
}
