package io.outbox.source.cdc;

import io.debezium.connector.postgresql.PostgresConnectorConfig;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.relay.spi.support.SettingsSourceProvider;
import io.outbox.source.postgres.DriverProperties;
import org.apache.kafka.common.config.ConfigDef;

/**
 * The {@code cdc} source: streams the outbox table's INSERTs from PostgreSQL's write-ahead log with
 * Debezium's embedded engine (pgoutput), offsets kept in the relay's own table; settings under
 * {@code source.cdc} (see {@link CdcSettings}).
 */
public final class CdcSourceProvider extends SettingsSourceProvider<CdcSettings> {

  /** The {@code source.type} of this source. */
  public static final String TYPE = "cdc";

  private static final String DEBEZIUM = "debezium.";
  private static final ConfigDef CONNECTOR = PostgresConnectorConfig.configDef();

  /** Called by {@link java.util.ServiceLoader}. */
  public CdcSourceProvider() {
    super(
        TYPE,
        CdcSettings::read,
        CdcSourceProvider::secret,
        SecretKeys.declared(DriverProperties::isSecret, DriverProperties::isKnown));
  }

  /**
   * Reads the database name from the URL; does not connect: the database is first used by {@link
   * Source#activate()}.
   *
   * @throws IllegalArgumentException when the settings, table names or database URL are invalid
   */
  @Override
  protected Source create(PluginContext context, DatabaseSettings database, CdcSettings settings) {
    // The default slot and publication names are derived from the database's name.
    String databaseName = CdcConnections.databaseName(database.url());
    return new CdcSource(
        context,
        database,
        SettingsReader.settings(context, r -> CdcSettings.read(r, databaseName), "cdc source"));
  }

  /**
   * Under {@code source.cdc.debezium}, what Debezium's PostgreSQL connector declares as type {@code
   * PASSWORD} (e.g. {@code database.password}, {@code database.sslpassword}); engine properties it
   * does not declare are left to the relay's fallback by name. The other {@code source.cdc} keys
   * hold no secret.
   */
  private static SecretKeys.Answer secret(String key) {
    if (!key.startsWith(DEBEZIUM)) {
      return SecretKeys.Answer.NOT_SECRET;
    }
    ConfigDef.ConfigKey declared = CONNECTOR.configKeys().get(key.substring(DEBEZIUM.length()));
    if (declared == null) {
      return SecretKeys.Answer.UNKNOWN;
    }
    return declared.type == ConfigDef.Type.PASSWORD
        ? SecretKeys.Answer.SECRET
        : SecretKeys.Answer.NOT_SECRET;
  }
}
