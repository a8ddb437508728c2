package io.outbox.relay.cli;

import io.outbox.relay.config.ConfigProblemsException;
import io.outbox.relay.config.LoadedConfig;
import io.outbox.relay.config.RelayConfigLoader;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The {@code --config FILE} option every command that reads the configuration mixes in. */
final class ConfigFileOption {

  @Option(
      names = {"-c", "--config"},
      required = true,
      paramLabel = "FILE",
      description = "The HOCON configuration file.")
  Path file;

  /**
   * Loads and validates the file; {@code ${?VAR}} resolves from the environment.
   *
   * @throws ConfigProblemsException listing every problem
   */
  LoadedConfig load() {
    return RelayConfigLoader.standard().load(file);
  }
}
