package io.outbox.relay.dist;

import io.outbox.relay.cli.Main;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The command line of the distribution archive ({@code bin/outbox-relay}): the daemon's commands
 * less those that need a source checkout ({@code demo} runs {@code scripts/services.sh} and reads
 * {@code config/demo.conf}; {@code bench} is the bench module's), which {@code ./outbox-relay} at
 * the root of a checkout keeps.
 */
public final class DistributionMain {
  /** The daemon's commands that only work in a source checkout. */
  static final List<String> CHECKOUT_ONLY = List.of("demo");

  private DistributionMain() {}

  public static void main(String[] args) {
    System.exit(
        execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
  }

  /** Runs the archive's command line; returns the exit code (as {@link Main#execute}). */
  static int execute(PrintWriter out, PrintWriter err, String... args) {
    // Main adds its "bench" pointer only to a Main object, not to a command given as a spec.
    CommandSpec spec = CommandSpec.forAnnotatedObject(new Main());
    CHECKOUT_ONLY.forEach(spec::removeSubcommand);
    return Main.execute(spec, out, err, args);
  }
}
