package io.outbox.relay.cli;

import io.outbox.relay.config.ConfigProblemsException;
import io.outbox.relay.config.LiteralSecrets;
import io.outbox.relay.config.LoadedConfig;
import io.outbox.relay.config.RelayConfigLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code --config FILE} option every command that reads the configuration mixes in, and the one
 * place that decides which file that is: {@code --config}, else the file {@value #ENV} names, else
 * {@value LaunchEnvironment#DEFAULT_CONFIG} when it exists.
 */
final class ConfigFileOption {

  /** The environment variable naming the config file when {@code --config} is not given. */
  static final String ENV = "OUTBOX_RELAY_CONFIG";

  private static final Logger log = LoggerFactory.getLogger(ConfigFileOption.class);

  @Option(
      names = {"-c", "--config"},
      paramLabel = "FILE",
      description =
          "The HOCON configuration file (default: the file $"
              + ENV
              + " names, else "
              + LaunchEnvironment.DEFAULT_CONFIG
              + "). CONFIG_FORCE_<key> environment variables override its settings.")
  Path file;

  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  /** The file to read and what named it ({@code --config}, the variable, the default). */
  record Choice(Path file, String namedBy) {}

  /**
   * Loads and validates the file, with the environment's {@code CONFIG_FORCE_...} settings over it;
   * {@code ${?VAR}} resolves from the environment. Secrets written in plain text in the file are
   * logged as warnings (never their values).
   *
   * @throws ConfigProblemsException listing every problem
   * @throws ParameterException when no file is given and the default does not exist
   */
  LoadedConfig load() {
    LaunchEnvironment environment = LaunchEnvironment.of(command);
    Choice choice = choose(file, environment);
    LoadedConfig loaded =
        RelayConfigLoader.standard(environment.variables()).load(choice.file(), choice.namedBy());
    List<String> overrides = RelayConfigLoader.overridingVariables(environment.variables());
    log.info(
        "configuration: {} (from {}){}",
        choice.file(),
        choice.namedBy(),
        overrides.isEmpty() ? "" : "; set by the environment: " + String.join(", ", overrides));
    LiteralSecrets.warnings(loaded).forEach(log::warn);
    return loaded;
  }

  /** Which file to read; a usage error when nothing names one and the default does not exist. */
  Choice choose(Path option, LaunchEnvironment environment) {
    if (option != null) {
      return new Choice(option, "--config");
    }
    Map<String, String> variables = environment.variables();
    String named = variables.get(ENV);
    if (named != null && !named.isBlank()) {
      return new Choice(Path.of(named), ENV);
    }
    Path fallback = environment.defaultConfig();
    if (Files.exists(fallback)) {
      return new Choice(fallback, "the default path");
    }
    throw new ParameterException(
        command.commandLine(),
        "no configuration file: --config FILE not given, "
            + ENV
            + " not set, and "
            + fallback
            + " (the default) does not exist");
  }
}
