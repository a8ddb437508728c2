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

  /**
   * The line that reports the action: {@code orders: purged 3 dead letters from t}, or with {@code
   * --dry-run} {@code orders: would purge 3 dead letters from t (dry run, nothing changed)}.
   *
   * @param verb the action, {@code purge}
   * @param done what it did, {@code purged}
   * @param what the rows and the table, {@code 3 dead letters from t}
   */
  final String outcome(String pipeline, String verb, String done, String what) {
    return pipeline
        + ": "
        + (dryRun ? "would " + verb : done)
        + " "
        + what
        + (dryRun ? " (dry run, nothing changed)" : "");
  }
}
