package io.outbox.schema;

import io.outbox.client.OutboxTables;
import java.util.Objects;

/**
 * What one {@link Migrator#migrate} run did.
 *
 * @param tables the outbox and dead-letter tables migrated
 * @param applied how many migrations this run applied; 0 when the schema was already current
 * @param version the schema version after the run, e.g. {@code "1"}
 * @param partitioned the partitioned layout asked for, or {@code null} for the plain one
 * @param layout what making that layout did, or {@code null} for the plain one
 */
public record MigrationResult(
    OutboxTables tables,
    int applied,
    String version,
    PartitionedLayout partitioned,
    PartitionedLayout.Outcome layout) {

  /** A run in the plain layout. */
  public MigrationResult(OutboxTables tables, int applied, String version) {
    this(tables, applied, version, null, null);
  }

  public MigrationResult {
    Objects.requireNonNull(tables, "tables");
    Objects.requireNonNull(version, "version");
    if (applied < 0) {
      throw new IllegalArgumentException("applied must be >= 0, got " + applied);
    }
  }

  /** One line for logs: {@code public.outbox: 1 migration applied, now at version 1}. */
  @Override
  public String toString() {
    return tables.displayTable()
        + ": "
        + applied
        + (applied == 1 ? " migration" : " migrations")
        + " applied, now at version "
        + version
        + layoutNote();
  }

  /**
   * What became of the layout, {@code "; now partitioned into ..."}, or empty for the plain layout.
   */
  public String layoutNote() {
    if (layout == null) {
      return "";
    }
    String shape =
        partitioned.count() + " partitions of " + partitioned.size() + " ids taken in turn";
    return switch (layout) {
      case ALREADY -> "; partitioned into " + shape;
      case CREATED -> "; now partitioned into " + shape;
      case CONVERTED ->
          "; now partitioned into "
              + shape
              + ", the rows it held stay in "
              + OutboxTables.fit(tables.table(), "_p_before")
              + " until retention empties it";
    };
  }
}
