package io.outbox.relay.spi.support;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link SinkProvider} made of its type, the one method that reads its settings, which keys hold
 * secrets and how the sink is built from its settings: {@code super(TYPE, FooSinkSettings::read,
 * SecretKeys.named("password"), FooSink::new)}.
 *
 * @param <S> the sink's settings record
 */
public abstract class SettingsSinkProvider<S> extends SettingsPlugin<S> implements SinkProvider {

  private final Factory<S> factory;

  /** Builds the sink from valid settings; should connect lazily (see {@link #create}). */
  @FunctionalInterface
  public interface Factory<S> {
    Sink create(PluginContext context, S settings);
  }

  /**
   * @param type the {@code sink.type} this provider serves
   * @param read the settings, each key read once, or {@code null} with the problems in the reader
   *     (e.g. {@code FooSinkSettings::read})
   * @param secretKeys which keys under {@code sink.<type>} hold secrets
   * @param factory the sink from valid settings; it should connect lazily, on the first publish or
   *     probe, so that creating a sink never blocks on the network
   */
  protected SettingsSinkProvider(
      String type, Function<SettingsReader, S> read, SecretKeys secretKeys, Factory<S> factory) {
    super(type, "sink", read, secretKeys);
    this.factory = Objects.requireNonNull(factory, "factory");
  }

  /**
   * Reads the settings and creates the sink from them.
   *
   * @throws IllegalArgumentException when the settings are invalid, listing every problem
   */
  @Override
  public final Sink create(PluginContext context) {
    return factory.create(context, settings(context));
  }
}
