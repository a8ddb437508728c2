package io.outbox.relay.spi.support;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link SinkProvider} made of its type, its settings record's {@code validate} and {@code from},
 * and which keys hold secrets: a sink's provider only says how to build the sink from its settings,
 * with a {@link Factory} given to the constructor or by overriding {@link #create(PluginContext,
 * Object)}.
 *
 * @param <S> the sink's settings record
 */
public abstract class SettingsSinkProvider<S> extends SettingsPlugin implements SinkProvider {

  private final Function<PluginContext, S> reader;
  private final Factory<S> factory;

  /** Builds the sink from valid settings; should connect lazily (see {@link #create}). */
  @FunctionalInterface
  public interface Factory<S> {
    Sink create(PluginContext context, S settings);
  }

  /**
   * For a provider that only needs to say how the sink is built: {@code super(TYPE,
   * FooSinkSettings::validate, FooSinkSettings::from, SecretKeys.named("password"), FooSink::new)}.
   *
   * @param factory the sink from valid settings (see {@link #create(PluginContext, Object)})
   */
  protected SettingsSinkProvider(
      String type,
      Function<PluginContext, List<SettingsProblem>> validator,
      Function<PluginContext, S> reader,
      SecretKeys secretKeys,
      Factory<S> factory) {
    super(type, validator, secretKeys);
    this.reader = Objects.requireNonNull(reader, "reader");
    this.factory = Objects.requireNonNull(factory, "factory");
  }

  /**
   * @param type the {@code sink.type} this provider serves
   * @param validator every problem of the settings, without connecting (e.g. {@code
   *     FooSinkSettings::validate})
   * @param reader the settings, or {@link IllegalArgumentException} listing every problem (e.g.
   *     {@code FooSinkSettings::from})
   * @param secretKeys which keys under {@code sink.<type>} hold secrets
   */
  protected SettingsSinkProvider(
      String type,
      Function<PluginContext, List<SettingsProblem>> validator,
      Function<PluginContext, S> reader,
      SecretKeys secretKeys) {
    super(type, validator, secretKeys);
    this.reader = Objects.requireNonNull(reader, "reader");
    this.factory = null;
  }

  /**
   * Reads the settings and creates the sink from them.
   *
   * @throws IllegalArgumentException when the settings are invalid, listing every problem
   */
  @Override
  public final Sink create(PluginContext context) {
    return create(context, reader.apply(context));
  }

  /**
   * Creates the sink from valid settings. Should connect lazily, on the first publish or probe, so
   * that this never blocks on the network. Runs the factory given to the constructor; a provider
   * built without one overrides this.
   */
  protected Sink create(PluginContext context, S settings) {
    if (factory == null) {
      throw new IllegalStateException(
          getClass().getName() + " must override create(context, settings)");
    }
    return factory.create(context, settings);
  }
}
