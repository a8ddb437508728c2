package io.outbox.relay.cli;

import picocli.CommandLine.Option;

/** {@code -h/--help} for subcommands (the version option stays on the top-level command). */
final class HelpOption {
  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help message and exit.")
  boolean help;
}
