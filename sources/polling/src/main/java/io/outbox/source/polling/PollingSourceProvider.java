package io.outbox.source.polling;

import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.support.SettingsSourceProvider;
import io.outbox.source.postgres.DriverProperties;

/**
 * The {@code polling} source: claims committed outbox rows with {@code SELECT ... FOR UPDATE} under
 * a per-lane advisory lock, woken by the insert trigger's {@code NOTIFY}; settings under {@code
 * source.polling} (see {@link PollingSettings}). No setting under {@code source.polling} holds a
 * secret; the PostgreSQL driver's own secret properties are those of {@link DriverProperties}.
 */
public final class PollingSourceProvider extends SettingsSourceProvider<PollingSettings> {

  /** The {@code source.type} of this source. */
  public static final String TYPE = "polling";

  /** Called by {@link java.util.ServiceLoader}. */
  public PollingSourceProvider() {
    super(
        TYPE,
        PollingSettings::read,
        key -> SecretKeys.Answer.NOT_SECRET,
        SecretKeys.declared(DriverProperties::isSecret, DriverProperties::isKnown));
  }

  /**
   * Does not connect: the database is first used by {@link Source#activate()}.
   *
   * @throws IllegalArgumentException when the settings or table names are invalid
   */
  @Override
  protected Source create(
      PluginContext context, DatabaseSettings database, PollingSettings settings) {
    return new PollingSource(context, database, settings);
  }
}
