package io.outbox.relay.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code bench} when the bench module is not on the class path (a daemon built or shipped without
 * it): says where the benchmark harness is instead of "unknown command".
 */
@Command(
    name = "bench",
    description = {
      "The benchmark harness (module bench/). Run it from a source checkout with",
      "./outbox-relay bench --help: the launcher builds it and puts it on the class path."
    })
final class BenchUnavailable implements Callable<Integer> {
  static final String BENCH_COMMAND = "io.outbox.bench.BenchCommand";

  @Spec CommandSpec spec;

  @Mixin HelpOption help;

  @Unmatched String[] ignored;

  @Override
  public Integer call() {
    throw new CommandFailedException(
        "the benchmark harness is not on this class path ("
            + BENCH_COMMAND
            + " not found); run ./outbox-relay bench from the source checkout, which builds the"
            + " bench module and runs it");
  }
}
