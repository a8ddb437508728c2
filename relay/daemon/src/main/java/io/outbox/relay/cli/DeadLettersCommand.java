package io.outbox.relay.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code dead-letters list | replay | purge}: inspect, re-queue or delete dead letters. */
@Command(
    name = "dead-letters",
    synopsisSubcommandLabel = "(list | replay | purge)",
    description = {
      "Inspects, re-queues (attempts reset, same event id) or deletes a pipeline's dead letters.",
      "Each action is one transaction. Exit 0 on success; 1 when the database fails; 2 for a"
          + " usage error or an invalid configuration."
    },
    subcommands = {
      DeadLettersListCommand.class,
      DeadLettersReplayCommand.class,
      DeadLettersPurgeCommand.class
    })
final class DeadLettersCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin HelpOption help;

  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(), "Missing required subcommand");
  }
}
