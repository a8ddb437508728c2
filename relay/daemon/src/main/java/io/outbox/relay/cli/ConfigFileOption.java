package io.outbox.relay.cli;

import io.outbox.relay.config.ConfigProblemsException;
import io.outbox.relay.config.LiteralSecrets;
import io.outbox.relay.config.LoadedConfig;
import io.outbox.relay.config.RelayConfigLoader;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

/** The {@code --config FILE} option every command that reads the configuration mixes in. */
final class ConfigFileOption {

  private static final Logger log = LoggerFactory.getLogger(ConfigFileOption.class);

  @Option(
      names = {"-c", "--config"},
      required = true,
      paramLabel = "FILE",
      description = "The HOCON configuration file.")
  Path file;

  /**
   * Loads and validates the file; {@code ${?VAR}} resolves from the environment. Secrets written in
   * plain text in the file are logged as warnings (never their values).
   *
   * @throws ConfigProblemsException listing every problem
   */
  LoadedConfig load() {
    LoadedConfig loaded = RelayConfigLoader.standard().load(file);
    LiteralSecrets.warnings(loaded).forEach(log::warn);
    return loaded;
  }
}
