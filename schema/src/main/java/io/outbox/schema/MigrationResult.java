package io.outbox.schema;

import io.outbox.client.OutboxTables;
import java.util.Objects;

/**
 * What one {@link Migrator#migrate} run did.
 *
 * @param tables the outbox and dead-letter tables migrated
 * @param applied how many migrations this run applied; 0 when the schema was already current
 * @param version the schema version after the run, e.g. {@code "1"}
 */
public record MigrationResult(OutboxTables tables, int applied, String version) {

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
        + version;
  }
}
