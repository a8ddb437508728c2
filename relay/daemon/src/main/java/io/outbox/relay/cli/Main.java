package io.outbox.relay.cli;

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
    description = "Publishes transactional outbox rows from PostgreSQL to Kafka or RabbitMQ.",
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
    try {
      try {
        LogFormat.fromEnvironment(System.getenv(LogFormat.ENV)).apply();
      } catch (IllegalArgumentException e) {
        err.println(e.getMessage());
        return USAGE;
      }
      return commandLine(out, err).execute(args);
    } finally {
      out.flush();
      err.flush();
    }
  }

  /** The configured command line, for {@link #execute} and for tests that add commands. */
  static CommandLine commandLine(PrintWriter out, PrintWriter err) {
    CommandLine commandLine = new CommandLine(new Main());
    commandLine.addSubcommand(bench());
    return commandLine
        .setOut(out)
        .setErr(err)
        .setCaseInsensitiveEnumValuesAllowed(true)
        .setParameterExceptionHandler(new UsageErrorReporter())
        .setExecutionExceptionHandler(new ErrorReporter());
  }

  /**
   * {@code bench} lives in the bench module, which brings the Debezium engine and the benchmark
   * clients the daemon does not need; the daemon offers it when that module is on the class path
   * (as {@code ./outbox-relay bench} puts it), and otherwise says how to get it.
   */
  private static Object bench() {
    try {
      return Class.forName(BenchUnavailable.BENCH_COMMAND).getDeclaredConstructor().newInstance();
    } catch (ClassNotFoundException e) {
      return new BenchUnavailable();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot create " + BenchUnavailable.BENCH_COMMAND, e);
    }
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
      String version = Main.class.getPackage().getImplementationVersion();
      return new String[] {
        "outbox-relay " + (version != null ? version : "(development build, not run from the jar)")
      };
    }
  }
}
