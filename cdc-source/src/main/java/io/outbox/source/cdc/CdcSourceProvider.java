package io.outbox.source.cdc;

import io.debezium.connector.postgresql.PostgresConnectorConfig;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceProvider;
import io.outbox.schema.DriverProperties;
import java.util.List;
import org.apache.kafka.common.config.ConfigDef;

/**
 * The {@code cdc} source: streams the outbox table's INSERTs from PostgreSQL's write-ahead log with
 * Debezium's embedded engine (pgoutput), offsets kept in the relay's own table; settings under
 * {@code source.cdc} (see {@link CdcSettings}).
 */
public final class CdcSourceProvider implements SourceProvider {

  /** The {@code source.type} of this source. */
  public static final String TYPE = "cdc";

  private static final String DEBEZIUM = "debezium.";
  private static final ConfigDef CONNECTOR = PostgresConnectorConfig.configDef();

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public List<SettingsProblem> validate(PluginContext context) {
    return CdcSettings.validate(context);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Does not connect: the database is first used by {@link Source#activate()}.
   *
   * @throws IllegalArgumentException when the settings, table names or database URL are invalid
   */
  @Override
  public Source create(PluginContext context, DatabaseSettings database) {
    String databaseName = CdcConnections.databaseName(database.url());
    return new CdcSource(context, database, CdcSettings.from(context, databaseName));
  }

  /**
   * Under {@code source.cdc.debezium}, what Debezium's PostgreSQL connector declares as type {@code
   * PASSWORD} (e.g. {@code database.password}, {@code database.sslpassword}); engine properties it
   * does not declare are left to the relay's fallback by name. The other {@code source.cdc} keys
   * hold no secret.
   */
  @Override
  public SecretKeys secretKeys() {
    return key -> {
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
    };
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
