package io.outbox.relay.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import picocli.CommandLine;

/** One run of the command line: its exit code and everything it wrote. */
record CommandLineRun(int exitCode, String out, String err) {

  /** Runs {@link Main} with {@code args}, capturing both streams. */
  static CommandLineRun of(String... args) {
    return of(null, args);
  }

  /** Runs {@link Main} with an extra subcommand (for tests of the error handling). */
  static CommandLineRun of(Object extraCommand, String... args) {
    return run(LaunchEnvironment.system(), extraCommand, args);
  }

  /** Runs {@link Main} in {@code environment} (its variables, its default config file). */
  static CommandLineRun in(LaunchEnvironment environment, String... args) {
    return run(environment, null, args);
  }

  private static CommandLineRun run(
      LaunchEnvironment environment, Object extraCommand, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    PrintWriter outWriter = new PrintWriter(out, true);
    PrintWriter errWriter = new PrintWriter(err, true);
    CommandLine commandLine = Main.commandLine(environment, outWriter, errWriter);
    if (extraCommand != null) {
      // Streams set before a subcommand is added do not reach it: set them again.
      commandLine.addSubcommand(extraCommand).setOut(outWriter).setErr(errWriter);
    }
    int code = commandLine.execute(args);
    outWriter.flush();
    errWriter.flush();
    return new CommandLineRun(code, out.toString(), err.toString());
  }

  List<String> errLines() {
    return err.lines().toList();
  }
}
