package io.outbox.relay.spi.support;

import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceProvider;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link SourceProvider} made of its type, the one method that reads its settings, and which keys
 * and driver properties hold secrets: a source's provider only says how to build the source from
 * its settings ({@link #create(PluginContext, DatabaseSettings, Object)}).
 *
 * @param <S> the source's settings record
 */
public abstract class SettingsSourceProvider<S> extends SettingsPlugin<S>
    implements SourceProvider {

  private final SecretKeys databaseSecretKeys;

  /**
   * @param type the {@code source.type} this provider serves
   * @param read the settings, each key read once, or {@code null} with the problems in the reader
   *     (e.g. {@code FooSettings::read})
   * @param secretKeys which keys under {@code source.<type>} hold secrets
   * @param databaseSecretKeys which JDBC driver properties hold secrets
   */
  protected SettingsSourceProvider(
      String type,
      Function<SettingsReader, S> read,
      SecretKeys secretKeys,
      SecretKeys databaseSecretKeys) {
    super(type, "source", read, secretKeys);
    this.databaseSecretKeys = Objects.requireNonNull(databaseSecretKeys, "databaseSecretKeys");
  }

  @Override
  public final SecretKeys databaseSecretKeys() {
    return databaseSecretKeys;
  }

  /**
   * Reads the settings and creates the source from them.
   *
   * @throws IllegalArgumentException when the settings are invalid, listing every problem
   */
  @Override
  public final Source create(PluginContext context, DatabaseSettings database) {
    return create(context, database, settings(context));
  }

  /** Creates the source from valid settings, without connecting. */
  protected abstract Source create(PluginContext context, DatabaseSettings database, S settings);
}
