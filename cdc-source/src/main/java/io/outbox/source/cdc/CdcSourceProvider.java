package io.outbox.source.cdc;

import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceProvider;
import java.util.List;

/**
 * The {@code cdc} source: streams the outbox table's INSERTs from PostgreSQL's write-ahead log with
 * Debezium's embedded engine (pgoutput), offsets kept in the relay's own table; settings under
 * {@code source.cdc} (see {@link CdcSettings}).
 */
public final class CdcSourceProvider implements SourceProvider {

  /** The {@code source.type} of this source. */
  public static final String TYPE = "cdc";

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
}
