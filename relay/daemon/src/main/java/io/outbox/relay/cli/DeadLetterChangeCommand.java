package io.outbox.relay.cli;

import picocli.CommandLine.Option;

/**
 * A {@code dead-letters} action that changes rows (replay, purge): it needs {@code --all} or a
 * criterion, and {@code --dry-run} only reports what it would do.
 */
abstract class DeadLetterChangeCommand extends DeadLetterCommand {

  @Option(
      names = "--all",
      description = "Every dead letter of the pipeline (instead of --id or other criteria).")
  boolean all;

  @Option(names = "--dry-run", description = "Only report what would change; change nothing.")
  boolean dryRun;

  @Override
  final void checkSelection() {
    requireDeliberateSelection(all);
  }
}
