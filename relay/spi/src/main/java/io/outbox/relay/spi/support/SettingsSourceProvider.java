package io.outbox.relay.spi.support;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.SourceProvider;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link SourceProvider} made of its type, its settings record's {@code validate}, and which keys
 * and driver properties hold secrets: a source's provider only says how to build the source ({@link
 * #create}).
 */
public abstract class SettingsSourceProvider extends SettingsPlugin implements SourceProvider {

  private final SecretKeys databaseSecretKeys;

  /**
   * @param type the {@code source.type} this provider serves
   * @param validator every problem of the settings, without connecting (e.g. {@code
   *     FooSettings::validate})
   * @param secretKeys which keys under {@code source.<type>} hold secrets
   * @param databaseSecretKeys which JDBC driver properties hold secrets
   */
  protected SettingsSourceProvider(
      String type,
      Function<PluginContext, List<SettingsProblem>> validator,
      SecretKeys secretKeys,
      SecretKeys databaseSecretKeys) {
    super(type, validator, secretKeys);
    this.databaseSecretKeys = Objects.requireNonNull(databaseSecretKeys, "databaseSecretKeys");
  }

  @Override
  public final SecretKeys databaseSecretKeys() {
    return databaseSecretKeys;
  }
}
