package io.outbox.relay.cli;

import io.outbox.admin.DeadLetterFilter;
import io.outbox.admin.DeadLetterTable;
import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.spi.DatabaseSettings;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * What the {@code dead-letters} subcommands share: the configuration, the pipeline and its
 * dead-letter selection, one connection to the pipeline's database; each subcommand does its one
 * action ({@link #act}) on it. A database failure is exit 1 with the driver's reason.
 */
abstract class DeadLetterCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConfigFileOption config;

  @Mixin DeadLetterSelection selection;

  @Mixin HelpOption help;

  @Override
  public final Integer call() {
    selection.validate(spec);
    checkSelection();
    PipelineSettings pipeline = selection.pipeline(spec, config.load().settings());
    DatabaseSettings db = pipeline.database();
    DeadLetterTable table =
        DeadLetterTable.of(
            OutboxTables.of(db.table(), db.deadLetterTable())
                .withColumns(OutboxColumns.of(db.columns())));
    try (Connection c = PipelineDatabase.connect(db)) {
      DeadLetterFilter filter = selection.filter(spec, c);
      PrintWriter out = spec.commandLine().getOut();
      act(pipeline.name(), table, c, filter, out);
      out.flush();
      return 0;
    } catch (SQLException e) {
      throw new CommandFailedException(
          pipeline.name() + ": " + table.tables().displayDeadLetterTable() + ": " + e.getMessage());
    }
  }

  /** Checks the combination of options before anything connects; nothing to check by default. */
  void checkSelection() {}

  /** The action, on an open connection in auto-commit mode. */
  abstract void act(
      String pipeline,
      DeadLetterTable table,
      Connection c,
      DeadLetterFilter filter,
      PrintWriter out)
      throws SQLException;

  /**
   * For actions that change rows: {@code --all} or at least one criterion, never both, so that
   * nothing is replayed or purged by accident.
   *
   * @throws ParameterException (exit 2) otherwise
   */
  final void requireDeliberateSelection(boolean all) {
    String name = spec.name();
    if (!all && !selection.selective()) {
      throw new ParameterException(
          spec.commandLine(),
          name
              + " needs --all, or at least one of --id, --reason, --event-type, --since, --until"
              + " to choose the dead letters");
    }
    if (all && selection.selective()) {
      throw new ParameterException(
          spec.commandLine(),
          "--all selects every dead letter of the pipeline; do not combine it with --id,"
              + " --reason, --event-type, --since or --until");
    }
  }

  static String deadLetters(int n) {
    return n + (n == 1 ? " dead letter" : " dead letters");
  }
}
