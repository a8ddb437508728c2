package io.outbox.relay.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code bench} in the daemon: the benchmark harness is a tool of its own (module bench/, which
 * imports the daemon, never the other way round), run by {@code ./outbox-relay bench}; this says so
 * instead of "unknown command".
 */
@Command(
    name = "bench",
    description = {
      "The benchmark harness (module bench/). Run it from a source checkout with",
      "./outbox-relay bench --help: the launcher builds it and puts it on the class path."
    })
final class BenchUnavailable implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin HelpOption help;

  @Unmatched String[] ignored;

  @Override
  public Integer call() {
    throw new CommandFailedException(
        "the benchmark harness is a tool of its own: run ./outbox-relay bench from the source"
            + " checkout, which builds the bench module and runs it");
  }
}
