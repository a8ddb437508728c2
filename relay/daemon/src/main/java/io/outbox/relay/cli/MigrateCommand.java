package io.outbox.relay.cli;

import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.schema.MigrationException;
import io.outbox.schema.MigrationResult;
import io.outbox.schema.Migrator;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code migrate}: creates or upgrades the outbox and dead-letter tables of every pipeline. */
@Command(
    name = "migrate",
    description = {
      "Creates or upgrades the outbox and dead-letter tables of every pipeline (idempotent).",
      "Exit 0 when all succeeded; 1 with one line per failing pipeline; 2 for an invalid"
          + " configuration."
    })
final class MigrateCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConfigFileOption config;

  @Mixin HelpOption help;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    boolean failed = false;
    for (PipelineSettings pipeline : config.load().settings().pipelines().values()) {
      try {
        MigrationResult result = migrate(pipeline.database());
        out.println(
            pipeline.name()
                + ": outbox "
                + result.tables().qualifiedTable()
                + " at version "
                + result.version()
                + " ("
                + result.applied()
                + (result.applied() == 1 ? " migration" : " migrations")
                + " applied)");
      } catch (MigrationException | CommandFailedException e) {
        err.println(pipeline.name() + ": " + e.getMessage());
        failed = true;
      }
      out.flush();
    }
    return failed ? Main.FAILURE : 0;
  }

  private static MigrationResult migrate(DatabaseSettings db) {
    Migrator migrator =
        new Migrator(
            OutboxTables.of(db.table(), db.deadLetterTable())
                .withColumns(OutboxColumns.of(db.columns())));
    if (db.properties().isEmpty()) {
      return migrator.migrate(db.url(), db.user(), db.password());
    }
    // database.properties (sslmode, ...) must apply to the migration's connections too.
    return migrator.migrate(PipelineDatabase.dataSource(db));
  }
}
