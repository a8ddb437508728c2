package io.outbox.relay.cli;

import io.outbox.relay.config.EffectiveSettingsPrinter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code check-config}: validates the configuration and prints the effective settings with their
 * origins.
 */
@Command(
    name = "check-config",
    description = {
      "Validates the configuration and prints the effective settings, defaults merged and secrets"
          + " masked, each followed by where it came from (file:line, env VARIABLE, or default:"
          + " reference.conf:line of the module).",
      "Exit 0 when valid; 2 with every problem listed (key path, bad value, file:line) otherwise."
    })
final class CheckConfigCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConfigFileOption config;

  @Mixin HelpOption help;

  @Override
  public Integer call() {
    String rendered = EffectiveSettingsPrinter.render(config.load());
    spec.commandLine().getOut().print(rendered);
    return 0;
  }
}
