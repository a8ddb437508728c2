package io.outbox.relay.spi.support;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * What a provider of the kit declares, sink or source alike: its type, the one method that reads
 * its settings (each key once, see {@link SettingsReader}) and which of its keys hold secrets.
 *
 * @param <S> the plug-in's settings record
 */
abstract class SettingsPlugin<S> {

  private final String type;
  private final String what;
  private final Function<SettingsReader, S> read;
  private final SecretKeys secretKeys;

  SettingsPlugin(
      String type, String kind, Function<SettingsReader, S> read, SecretKeys secretKeys) {
    this.type = Objects.requireNonNull(type, "type");
    this.what = type + " " + kind;
    this.read = Objects.requireNonNull(read, "read");
    this.secretKeys = Objects.requireNonNull(secretKeys, "secretKeys");
  }

  /** The name users write as {@code sink.type} or {@code source.type}. */
  public final String type() {
    return type;
  }

  /** Every problem of the settings, without connecting. */
  public final List<SettingsProblem> validate(PluginContext context) {
    return SettingsReader.problems(context, read);
  }

  /**
   * The settings of {@code context}.
   *
   * @throws IllegalArgumentException listing every problem
   */
  protected final S settings(PluginContext context) {
    return SettingsReader.settings(context, read, what);
  }

  /**
   * The keys its {@code read} looks up in {@code context}'s settings: with the defaults, every key
   * it declares (a key below a free-form object such as {@code producer} is the object's).
   */
  public final Set<String> keys(PluginContext context) {
    SettingsReader reader = new SettingsReader(context);
    read.apply(reader);
    return reader.keysLooked();
  }

  /** Which keys of the plug-in's subtree hold secrets. */
  public final SecretKeys secretKeys() {
    return secretKeys;
  }
}
