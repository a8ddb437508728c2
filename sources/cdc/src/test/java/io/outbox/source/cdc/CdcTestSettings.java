package io.outbox.source.cdc;

import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.testkit.SourceSettings;
import java.time.Clock;
import java.util.Map;

/**
 * The plug-in context and database of pipeline {@code orders} as the CDC source's unit tests build
 * them, its settings being reference.conf's defaults under the test's overrides; public for the
 * tests of the source's sub-packages.
 */
public final class CdcTestSettings {

  private CdcTestSettings() {}

  /** Pipeline {@code orders}, 4 lanes, settings {@code overrides} over the defaults. */
  public static PluginContext context(Map<String, ?> overrides) {
    return new PluginContext(
        "orders",
        SourceSettings.of("cdc", Map.of(), overrides),
        "outbox-relay.pipelines.orders.source.cdc",
        4,
        500,
        Clock.systemUTC(),
        Ticker.SYSTEM,
        role -> {});
  }

  /**
   * The settings of {@code context}, names derived from {@code databaseName} as the source does.
   */
  public static CdcSettings named(PluginContext context, String databaseName) {
    return SettingsReader.settings(context, r -> CdcSettings.read(r, databaseName), "cdc source");
  }

  /** Database {@code shop} on host {@code db}, with driver {@code properties}. */
  public static DatabaseSettings database(Map<String, String> properties) {
    return new DatabaseSettings(
        "jdbc:postgresql://db:5432/shop",
        "app",
        null,
        properties,
        "outbox",
        "outbox_dead_letter",
        DatabaseSettings.OnPublish.MARK,
        "orders");
  }
}
