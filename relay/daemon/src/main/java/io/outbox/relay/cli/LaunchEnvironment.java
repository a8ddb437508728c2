package io.outbox.relay.cli;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What a command reads from outside its arguments: the environment variables, and the config file
 * it reads when neither {@code --config} nor {@value ConfigFileOption#ENV} names one. Tests give
 * their own, since a Java process cannot change its environment.
 *
 * @param variables the environment variables
 * @param defaultConfig the default config file (the container image's {@value #DEFAULT_CONFIG})
 */
record LaunchEnvironment(Map<String, String> variables, Path defaultConfig) {

  /** The default config file: the container image's, and a packaged installation's. */
  static final String DEFAULT_CONFIG = "/etc/outbox-relay/relay.conf";

  LaunchEnvironment {
    variables = Map.copyOf(variables);
    Objects.requireNonNull(defaultConfig, "defaultConfig");
  }

  /** The process's environment and {@value #DEFAULT_CONFIG}. */
  static LaunchEnvironment system() {
    return new LaunchEnvironment(System.getenv(), Path.of(DEFAULT_CONFIG));
  }

  /** The environment of the command line {@code command} belongs to. */
  static LaunchEnvironment of(CommandSpec command) {
    return command.root().userObject() instanceof Main main ? main.environment() : system();
  }
}
