package io.outbox.relay.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * Reports a usage error (unknown command or option, missing {@code --config}...) as one line naming
 * what is wrong, followed by the usage of the command concerned; exit code 2.
 */
final class UsageErrorReporter implements IParameterExceptionHandler {

  @Override
  public int handleParseException(ParameterException e, String[] args) {
    CommandLine command = e.getCommandLine();
    PrintWriter err = command.getErr();
    err.println(command.getCommandSpec().qualifiedName() + ": " + describe(e, command));
    command.usage(err);
    return Main.USAGE;
  }

  private static String describe(ParameterException e, CommandLine command) {
    if (!(e instanceof UnmatchedArgumentException unmatched)
        || unmatched.getUnmatched().isEmpty()) {
      return e.getMessage();
    }
    String argument = unmatched.getUnmatched().get(0);
    boolean option = argument.startsWith("-");
    String what =
        option
            ? "unknown option '" + argument + "'"
            : command.getSubcommands().isEmpty()
                ? "unexpected argument '" + argument + "'"
                : "unknown command '" + argument + "'";
    // picocli suggests loosely (frobnicate -> migrate); keep only a suggestion that looks alike.
    String stem = stem(argument);
    for (String suggestion : unmatched.getSuggestions()) {
      if (stem.length() >= 3 && stem(suggestion).startsWith(stem.substring(0, 3))) {
        return what + " (did you mean " + suggestion + "?)";
      }
    }
    return what;
  }

  private static String stem(String argument) {
    return argument.replaceFirst("^-+", "");
  }
}
