package io.outbox.relay.cli;

import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.schema.MigrationException;
import io.outbox.schema.MigrationResult;
import io.outbox.schema.Migrator;
import io.outbox.schema.PartitionedLayout;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code migrate}: creates or upgrades the outbox and dead-letter tables of every pipeline, or with
 * {@code --print-sql} prints the SQL it would run, without connecting.
 */
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

  @Option(
      names = "--print-sql",
      description = {
        "Print the SQL the migrations would run for the configured tables, as one script to apply"
            + " with psql or your own migration tool; connects to no database."
      })
  boolean printSql;

  @Override
  public Integer call() {
    if (printSql) {
      return printSql();
    }
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
                + " applied)"
                + result.layoutNote());
      } catch (MigrationException | CommandFailedException e) {
        err.println(pipeline.name() + ": " + e.getMessage());
        failed = true;
      }
      out.flush();
    }
    return failed ? Main.FAILURE : 0;
  }

  /** One script per outbox; pipelines that share an outbox share its script. */
  private int printSql() {
    Map<OutboxTables, List<String>> outboxes = new LinkedHashMap<>();
    Map<OutboxTables, PartitionedLayout> layouts = new LinkedHashMap<>();
    Set<OutboxTables> positioned = new HashSet<>();
    for (PipelineSettings pipeline : config.load().settings().pipelines().values()) {
      OutboxTables tables = tables(pipeline.database());
      outboxes.computeIfAbsent(tables, t -> new ArrayList<>()).add(pipeline.name());
      PartitionedLayout layout = layout(pipeline.database());
      if (layout != null) {
        layouts.putIfAbsent(tables, layout);
      }
      if (byPosition(pipeline.database())) {
        positioned.add(tables);
      }
    }
    PrintWriter out = spec.commandLine().getOut();
    boolean first = true;
    for (Map.Entry<OutboxTables, List<String>> outbox : outboxes.entrySet()) {
      try {
        String script =
            new Migrator(
                    outbox.getKey(),
                    layouts.get(outbox.getKey()),
                    positioned.contains(outbox.getKey()))
                .script();
        out.print(first ? "" : "\n");
        out.println("-- pipelines: " + String.join(", ", outbox.getValue()));
        out.print(script);
        first = false;
      } catch (MigrationException e) {
        spec.commandLine().getErr().println(e.getMessage());
        return Main.FAILURE;
      }
    }
    out.flush();
    return 0;
  }

  private static OutboxTables tables(DatabaseSettings db) {
    return OutboxTables.of(db.table(), db.deadLetterTable())
        .withColumns(OutboxColumns.of(db.columns()));
  }

  /** The partitioned layout {@code layout = partitioned} asks for, or null for the plain one. */
  private static PartitionedLayout layout(DatabaseSettings db) {
    DatabaseSettings.Partitions p = db.partitions();
    return p.partitioned() ? new PartitionedLayout(p.count(), p.size()) : null;
  }

  private static boolean byPosition(DatabaseSettings db) {
    return db.onPublish() == DatabaseSettings.OnPublish.POSITION;
  }

  private static MigrationResult migrate(DatabaseSettings db) {
    Migrator migrator = new Migrator(tables(db), layout(db), byPosition(db));
    if (db.properties().isEmpty()) {
      return migrator.migrate(db.url(), db.user(), db.password());
    }
    // database.properties (sslmode, ...) must apply to the migration's connections too.
    return migrator.migrate(PipelineDatabase.dataSource(db));
  }
}
