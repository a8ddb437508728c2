package io.outbox.relay.cli;

import io.outbox.admin.DeadLetter;
import io.outbox.admin.DeadLetterFilter;
import io.outbox.admin.DeadLetterTable;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code dead-letters list}: shows dead letters as a table or as JSON. */
@Command(
    name = "list",
    description = {
      "Lists the chosen dead letters, oldest first: event id, type, aggregate, reason, attempts,",
      "when dead-lettered and the last error (payloads are not shown). Without criteria: all of",
      "the pipeline's, up to --limit."
    })
final class DeadLettersListCommand extends DeadLetterCommand {

  @Option(
      names = "--limit",
      paramLabel = "N",
      defaultValue = "100",
      description = "Show at most N dead letters (default ${DEFAULT-VALUE}); 0 shows all.")
  int limit;

  @Option(names = "--json", description = "Print JSON instead of a table.")
  boolean json;

  @Override
  void checkSelection() {
    if (limit < 0) {
      throw new ParameterException(
          spec.commandLine(), "--limit must be 0 (all) or more, not " + limit);
    }
  }

  @Override
  void act(
      String pipeline,
      DeadLetterTable table,
      Connection c,
      DeadLetterFilter filter,
      PrintWriter out)
      throws SQLException {
    List<DeadLetter> rows = table.list(c, filter, limit);
    int total = limit > 0 && rows.size() == limit ? table.count(c, filter) : rows.size();
    DeadLetterListing listing =
        new DeadLetterListing(pipeline, table.tables().displayDeadLetterTable(), rows, total);
    out.print(json ? listing.json() : listing.text());
  }
}
