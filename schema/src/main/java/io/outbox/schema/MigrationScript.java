package io.outbox.schema;

import static io.outbox.client.OutboxTables.quote;

import io.outbox.client.OutboxTables;
import java.io.IOException;
import java.io.Reader;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.configuration.Configuration;
import org.flywaydb.core.api.migration.JavaMigration;
import org.flywaydb.core.api.resource.LoadableResource;
import org.flywaydb.core.internal.parser.ParsingContext;
import org.flywaydb.core.internal.parser.PlaceholderReplacingReader;
import org.flywaydb.core.internal.scanner.Scanner;

/**
 * Renders the migrations as one SQL script ({@code migrate --print-sql}). Our own because Flyway's
 * dry-run output is a feature of its paid editions; the files are found by Flyway's scanner and
 * their placeholders replaced by Flyway's reader, with the configuration {@link Migrator#migrate}
 * uses, so the text is the text Flyway executes.
 */
final class MigrationScript {

  private MigrationScript() {}

  static String of(Configuration configuration, OutboxTables tables, Set<String> schemas)
      throws IOException {
    List<Migration> migrations = migrations(configuration);
    StringBuilder script = new StringBuilder();
    script
        .append("-- outbox-relay schema of the outbox ")
        .append(tables.displayTable())
        .append(" (dead letters ")
        .append(tables.displayDeadLetterTable())
        .append("): migrations V")
        .append(migrations.get(0).version())
        .append(" to V")
        .append(migrations.get(migrations.size() - 1).version())
        .append(", as `outbox-relay migrate` runs them, without Flyway's history table.\n")
        .append("-- Every statement is idempotent. Apply it in one transaction (psql -1 -f).\n");
    for (String schema : schemas) {
      if (!schema.equals(OutboxTables.DEFAULT_SCHEMA)) {
        script.append("\nCREATE SCHEMA IF NOT EXISTS ").append(quote(schema)).append(";\n");
      }
    }
    for (Migration migration : migrations) {
      script.append("\n-- ").append(migration.resource().getFilename()).append('\n');
      try (Reader reader =
          PlaceholderReplacingReader.create(
              configuration, new ParsingContext(), migration.resource().read())) {
        script.append(readAll(reader));
      }
      if (script.charAt(script.length() - 1) != '\n') {
        script.append('\n');
      }
    }
    return script.toString();
  }

  private record Migration(MigrationVersion version, LoadableResource resource) {}

  /** The versioned SQL migrations of the configured locations, in version order. */
  private static List<Migration> migrations(Configuration configuration) {
    String prefix = configuration.getSqlMigrationPrefix();
    String separator = configuration.getSqlMigrationSeparator();
    Scanner<JavaMigration> scanner =
        new Scanner<>(JavaMigration.class, configuration, configuration.getLocations());
    List<Migration> migrations = new ArrayList<>();
    for (LoadableResource resource :
        scanner.getResources(prefix, configuration.getSqlMigrationSuffixes())) {
      String name = resource.getFilename();
      int end = name.indexOf(separator);
      if (end <= prefix.length()) {
        throw new IllegalStateException("not a versioned migration's file name: " + name);
      }
      migrations.add(
          new Migration(
              MigrationVersion.fromVersion(name.substring(prefix.length(), end)), resource));
    }
    if (!scanner
        .getResources(
            configuration.getRepeatableSqlMigrationPrefix(),
            configuration.getSqlMigrationSuffixes())
        .isEmpty()) {
      throw new IllegalStateException("repeatable migrations are not rendered");
    }
    if (migrations.isEmpty()) {
      throw new IllegalStateException("no migrations found");
    }
    migrations.sort(Comparator.comparing(Migration::version));
    return migrations;
  }

  private static String readAll(Reader reader) throws IOException {
    StringWriter text = new StringWriter();
    reader.transferTo(text);
    return text.toString();
  }
}
