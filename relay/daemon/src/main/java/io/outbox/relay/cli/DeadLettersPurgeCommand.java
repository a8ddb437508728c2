package io.outbox.relay.cli;

import io.outbox.admin.DeadLetterFilter;
import io.outbox.admin.DeadLetterTable;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import picocli.CommandLine.Command;

/** {@code dead-letters purge}: deletes dead letters. */
@Command(
    name = "purge",
    description = {
      "Deletes the chosen dead letters in one transaction and reports how many.",
      "Needs --all or at least one of --id, --reason, --event-type, --since, --until."
    })
final class DeadLettersPurgeCommand extends DeadLetterChangeCommand {

  @Override
  void act(
      String pipeline,
      DeadLetterTable table,
      Connection c,
      DeadLetterFilter filter,
      PrintWriter out)
      throws SQLException {
    int purged = table.purge(c, filter, dryRun);
    out.println(
        outcome(
            pipeline,
            "purge",
            "purged",
            deadLetters(purged) + " from " + table.tables().displayDeadLetterTable()));
  }
}
