package io.outbox.source.polling;

import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceProvider;
import io.outbox.schema.DriverProperties;
import java.util.List;

/**
 * The {@code polling} source: claims committed outbox rows with {@code SELECT ... FOR UPDATE} under
 * a per-lane advisory lock, woken by the insert trigger's {@code NOTIFY}; settings under {@code
 * source.polling} (see {@link PollingSettings}).
 */
public final class PollingSourceProvider implements SourceProvider {

  /** The {@code source.type} of this source. */
  public static final String TYPE = "polling";

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public List<SettingsProblem> validate(PluginContext context) {
    return PollingSettings.validate(context);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Does not connect: the database is first used by {@link Source#activate()}.
   *
   * @throws IllegalArgumentException when the settings or table names are invalid
   */
  @Override
  public Source create(PluginContext context, DatabaseSettings database) {
    return new PollingSource(context, database, PollingSettings.from(context));
  }

  /** No setting under {@code source.polling} holds a secret. */
  @Override
  public SecretKeys secretKeys() {
    return key -> SecretKeys.Answer.NOT_SECRET;
  }

  /** The PostgreSQL driver's own secret properties ({@link DriverProperties}). */
  @Override
  public SecretKeys databaseSecretKeys() {
    return name ->
        DriverProperties.isSecret(name)
            ? SecretKeys.Answer.SECRET
            : DriverProperties.isKnown(name)
                ? SecretKeys.Answer.NOT_SECRET
                : SecretKeys.Answer.UNKNOWN;
  }
}
