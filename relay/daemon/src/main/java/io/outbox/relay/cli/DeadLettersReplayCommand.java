package io.outbox.relay.cli;

import io.outbox.admin.DeadLetterFilter;
import io.outbox.admin.DeadLetterTable;
import io.outbox.admin.DeadLetterTable.ReplayCount;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import picocli.CommandLine.Command;

/** {@code dead-letters replay}: moves dead letters back into the outbox, attempts reset. */
@Command(
    name = "replay",
    description = {
      "Moves the chosen dead letters back into the outbox in one transaction: same event id,",
      "aggregate, type, destination, payload, headers and created_at; attempts 0. Each gets a",
      "new outbox id, so it is published after the events of its key already in the outbox.",
      "A dead letter whose event id is in the outbox already is skipped (and counted).",
      "Needs --all or at least one of --id, --reason, --event-type, --since, --until."
    })
final class DeadLettersReplayCommand extends DeadLetterChangeCommand {

  @Override
  void act(
      String pipeline,
      DeadLetterTable table,
      Connection c,
      DeadLetterFilter filter,
      PrintWriter out)
      throws SQLException {
    ReplayCount count = table.replay(c, filter, dryRun);
    String skipped =
        count.skipped() == 0
            ? ""
            : ", skipped "
                + count.skipped()
                + " whose event id is already in the outbox"
                + (dryRun ? "" : " (they stay dead-lettered)");
    out.println(
        outcome(
            pipeline,
            "replay",
            "replayed",
            deadLetters(count.replayed()) + " into " + table.tables().displayTable() + skipped));
  }
}
