package io.outbox.relay.cli;

import io.outbox.relay.config.ConfigProblemsException;
import java.io.PrintWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.ParseResult;

/**
 * Turns an exception that escaped a command into a message and an exit code. Expected failures (an
 * invalid configuration, a {@link CommandFailedException}) get their message only; anything else is
 * a bug or an environment problem: one line, and the stack trace with {@code --verbose} (and at
 * debug level in the log).
 */
final class ErrorReporter implements IExecutionExceptionHandler {

  private static final Logger LOG = LoggerFactory.getLogger(ErrorReporter.class);

  @Override
  public int handleExecutionException(Exception e, CommandLine commandLine, ParseResult parsed) {
    PrintWriter err = commandLine.getErr();
    if (e instanceof ConfigProblemsException problems) {
      err.println(problems.getMessage());
      return Main.USAGE;
    }
    if (e instanceof CommandFailedException failed) {
      err.println(commandLine.getCommandName() + ": " + failed.getMessage());
      return Main.FAILURE;
    }
    err.println(commandLine.getCommandName() + ": unexpected error: " + e);
    if (verbose(parsed)) {
      e.printStackTrace(err);
    } else {
      err.println("(run with --verbose for the stack trace)");
    }
    LOG.debug("unexpected error in {}", commandLine.getCommandName(), e);
    return Main.FAILURE;
  }

  private static boolean verbose(ParseResult parsed) {
    for (ParseResult p = parsed; p != null; p = p.subcommand()) {
      if (p.hasMatchedOption("--verbose")) {
        return true;
      }
    }
    return false;
  }
}
