package io.outbox.relay.spi.support;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * What a provider of the kit declares, sink or source alike: its type, its settings check and which
 * of its keys hold secrets.
 */
abstract class SettingsPlugin {

  private final String type;
  private final Function<PluginContext, List<SettingsProblem>> validator;
  private final SecretKeys secretKeys;

  SettingsPlugin(
      String type,
      Function<PluginContext, List<SettingsProblem>> validator,
      SecretKeys secretKeys) {
    this.type = Objects.requireNonNull(type, "type");
    this.validator = Objects.requireNonNull(validator, "validator");
    this.secretKeys = Objects.requireNonNull(secretKeys, "secretKeys");
  }

  /** The name users write as {@code sink.type} or {@code source.type}. */
  public final String type() {
    return type;
  }

  /** Every problem of the settings, without connecting. */
  public final List<SettingsProblem> validate(PluginContext context) {
    return validator.apply(context);
  }

  /** Which keys of the plug-in's subtree hold secrets. */
  public final SecretKeys secretKeys() {
    return secretKeys;
  }
}
