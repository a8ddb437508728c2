package io.outbox.relay.cli;

import io.outbox.relay.BuildInfo;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The {@code outbox-relay} command line: parses the arguments, runs one subcommand and maps the
 * outcome to an exit code (0 success, 1 failure, 2 usage error or invalid configuration).
 */
@Command(
    name = "outbox-relay",
    mixinStandardHelpOptions = true,
    versionProvider = Main.ManifestVersion.class,
    synopsisSubcommandLabel = "COMMAND",
    description =
        "Publishes transactional outbox rows from PostgreSQL to Kafka, RabbitMQ, NATS JetStream or"
            + " Redis Streams.",
    // A new subcommand is one more entry here.
    subcommands = {
      RunCommand.class,
      MigrateCommand.class,
      CheckConfigCommand.class,
      StatusCommand.class,
      DeadLettersCommand.class,
      DemoCommand.class,
      HelpCommand.class
    })
public final class Main implements Callable<Integer> {

  /** Exit code of a usage error or an invalid configuration. */
  public static final int USAGE = 2;

  /** Exit code of a command that failed (database unreachable, migration failed...). */
  public static final int FAILURE = 1;

  @Spec CommandSpec spec;

  private final LaunchEnvironment environment;

  /** The command line of this process: its environment, the default config file. */
  public Main() {
    this(LaunchEnvironment.system());
  }

  /** A command line with the given environment (tests). */
  Main(LaunchEnvironment environment) {
    this.environment = environment;
  }

  @Option(
      names = "--verbose",
      scope = ScopeType.INHERIT,
      description = "Print the stack trace of unexpected errors.")
  boolean verbose;

  @Option(
      names = "--log-format",
      scope = ScopeType.INHERIT,
      paramLabel = "plain|json",
      description =
          "Log lines as plain text (default) or as JSON objects, one per line; overrides the"
              + " environment variable OUTBOX_LOG_FORMAT.")
  void logFormat(LogFormat format) {
    format.apply();
  }

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  /** Runs the command line on the process's standard streams; returns the exit code. */
  public static int execute(String... args) {
    return execute(writer(System.out), writer(System.err), args);
  }

  /** Runs the command line writing to {@code out} and {@code err}; returns the exit code. */
  public static int execute(PrintWriter out, PrintWriter err, String... args) {
    return execute(new Main(), out, err, args);
  }

  /**
   * Runs {@code command}, a picocli command, with the relay's command-line conventions (log format,
   * exit codes, how errors are reported): the bench module's own main runs its command so.
   */
  public static int execute(Object command, PrintWriter out, PrintWriter err, String... args) {
    try {
      try {
        LogFormat.fromEnvironment(System.getenv(LogFormat.ENV)).apply();
      } catch (IllegalArgumentException e) {
        err.println(e.getMessage());
        return USAGE;
      }
      return commandLine(command, out, err).execute(args);
    } finally {
      out.flush();
      err.flush();
    }
  }

  /** The configured command line, for {@link #execute} and for tests that add commands. */
  static CommandLine commandLine(PrintWriter out, PrintWriter err) {
    return commandLine(new Main(), out, err);
  }

  /** The configured command line with the given environment, for tests. */
  static CommandLine commandLine(LaunchEnvironment environment, PrintWriter out, PrintWriter err) {
    return commandLine(new Main(environment), out, err);
  }

  /** What the commands read from outside their arguments. */
  LaunchEnvironment environment() {
    return environment;
  }

  /**
   * {@code command} (a picocli command: this class's or the bench's) with the relay's command-line
   * conventions, not run: {@link #execute} runs it, the docs check parses the lines the docs show.
   */
  public static CommandLine commandLine(Object command, PrintWriter out, PrintWriter err) {
    CommandLine commandLine = new CommandLine(command);
    if (command instanceof Main) {
      // The benchmark harness is a tool of its own (module bench/, which imports the daemon).
      commandLine.addSubcommand(new BenchUnavailable());
    }
    return commandLine
        .setOut(out)
        .setErr(err)
        .setCaseInsensitiveEnumValuesAllowed(true)
        .setParameterExceptionHandler(new UsageErrorReporter())
        .setExecutionExceptionHandler(new ErrorReporter());
  }

  /** Without a subcommand there is nothing to do: a usage error. */
  @Override
  public Integer call() {
    throw new ParameterException(spec.commandLine(), "Missing required subcommand");
  }

  private static PrintWriter writer(PrintStream stream) {
    return new PrintWriter(stream, true);
  }

  /** {@code --version}: the jar manifest's {@code Implementation-Version}. */
  static final class ManifestVersion implements IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"outbox-relay " + BuildInfo.version()};
    }
  }
}
