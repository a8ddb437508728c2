package io.outbox.source.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.support.SettingsReader;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class CdcSettingsTest {

  /** The settings of {@code context}, names derived as the source derives them. */
  static CdcSettings named(PluginContext context, String databaseName) {
    return SettingsReader.settings(context, r -> CdcSettings.read(r, databaseName), "cdc source");
  }

  private static PluginContext context(Map<String, ?> overrides) {
    return new PluginContext(
        "orders",
        ConfigFactory.parseMap(overrides)
            .withFallback(
                ConfigFactory.defaultReference()
                    .getConfig("outbox-relay.pipeline-defaults.source.cdc")),
        "outbox-relay.pipelines.orders.source.cdc",
        4,
        500,
        Clock.systemUTC(),
        role -> {});
  }

  @Test
  void defaultsAreValidAndNamesComeFromDatabaseAndPipeline() {
    CdcSettings s = CdcSettingsTest.named(context(Map.of()), "shop");
    assertThat(s.slotName()).isEqualTo("outbox_relay_shop_orders");
    assertThat(s.publicationName()).isEqualTo("outbox_relay_shop_orders");
    assertThat(s.onSlotLoss()).isEqualTo(CdcSettings.OnSlotLoss.FAIL);
    assertThat(s.reconcileAfter()).isEqualTo(Duration.ofMinutes(5));
    assertThat(s.createPublication()).isTrue();
    assertThat(s.debezium()).isEmpty();
    assertThat(s.socketTimeout()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void everySessionAndTheEngineGetTheSocketTimeoutUnlessTheUserSetOne() {
    CdcSettings s = CdcSettingsTest.named(context(Map.of("socket-timeout", "7500ms")), "shop");
    CdcConnections connections = new CdcConnections(database(Map.of()), s, "orders");
    assertThat(connections.socketTimeoutSeconds()).isEqualTo("8");
    assertThat(
            EngineProperties.of(
                    s, connections, OutboxTables.of("outbox", "dl"), "orders", "r", "g", "k")
                .getProperty("database.socketTimeout"))
        .isEqualTo("8");

    CdcConnections userSet =
        new CdcConnections(database(Map.of("socketTimeout", "120")), s, "orders");
    assertThat(userSet.socketTimeoutSeconds()).isEqualTo("120");
    CdcSettings debeziumSet =
        CdcSettingsTest.named(
            context(Map.of("debezium", Map.of("database.socketTimeout", "0"))), "shop");
    assertThat(engine(debeziumSet).getProperty("database.socketTimeout")).isEqualTo("0");
  }

  @Test
  void theEngineStreamsOnlyTheKeyColumnsAndConvertsTimestampsToMicrosUnlessTheUserChoseOtherwise() {
    CdcSettings s = CdcSettingsTest.named(context(Map.of()), "shop");
    Properties p = engine(s);
    assertThat(p.getProperty("converters")).isEqualTo(EpochMicrosConverter.NAME);
    assertThat(p.getProperty(EpochMicrosConverter.NAME + ".type"))
        .isEqualTo(EpochMicrosConverter.class.getName());
    assertThat(p.getProperty("column.include.list"))
        .isEqualTo("public\\.outbox\\.(id|aggregate_type|aggregate_id|available_at)");
    assertThat(p.getProperty("column.exclude.list")).isNull();

    CdcSettings own =
        CdcSettingsTest.named(
            context(
                Map.of(
                    "debezium",
                    Map.of(
                        "converters", "mine",
                        "mine.type", "com.example.Mine",
                        "column.exclude.list", "public\\.outbox\\.payload"))),
            "shop");
    Properties q = engine(own);
    assertThat(q.getProperty("converters")).isEqualTo("mine");
    assertThat(q.getProperty(EpochMicrosConverter.NAME + ".type")).isNull();
    assertThat(q.getProperty("column.exclude.list"))
        .as("the relay owns the streamed columns (Debezium refuses both lists)")
        .isNull();
    assertThat(q.getProperty("column.include.list"))
        .isEqualTo(p.getProperty("column.include.list"));
  }

  @Test
  void theEnginesSocketsComeFromTheSessionsFactoryUnlessTheUserNamedOne() {
    CdcSettings s = CdcSettingsTest.named(context(Map.of()), "shop");
    Properties p = engine(s);
    assertThat(p.getProperty("database.socketFactory"))
        .isEqualTo(EngineSockets.Factory.class.getName());
    assertThat(p.getProperty("database.socketFactoryArg")).isEqualTo("k");
    CdcSettings own =
        CdcSettingsTest.named(
            context(Map.of("debezium", Map.of("database.socketFactory", "com.example.Mine"))),
            "shop");
    assertThat(engine(own).getProperty("database.socketFactory")).isEqualTo("com.example.Mine");
    assertThat(engine(own).getProperty("database.socketFactoryArg")).isNull();
  }

  /** The engine properties of {@code s} for the pipeline's database without driver properties. */
  private static Properties engine(CdcSettings s) {
    return EngineProperties.of(
        s,
        new CdcConnections(database(Map.of()), s, "orders"),
        OutboxTables.of("outbox", "dl"),
        "orders",
        "r",
        "g",
        "k");
  }

  private static DatabaseSettings database(Map<String, String> properties) {
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

  @Test
  void configuredNamesAndRawDebeziumPropertiesAreKept() {
    CdcSettings s =
        CdcSettingsTest.named(
            context(
                Map.of(
                    "slot-name", "orders_slot",
                    "on-slot-loss", "recreate",
                    "debezium", Map.of("slot.stream.params", "a=1"))),
            "shop");
    assertThat(s.slotName()).isEqualTo("orders_slot");
    assertThat(s.onSlotLoss()).isEqualTo(CdcSettings.OnSlotLoss.RECREATE);
    assertThat(s.debezium()).containsEntry("slot.stream.params", "a=1");
  }

  @Test
  void everyProblemIsListedWithItsKeyPathAndValue() {
    List<SettingsProblem> problems =
        SettingsReader.problems(
            context(
                Map.of(
                    "slot-name", "Orders-Slot",
                    "on-slot-loss", "ignore",
                    "reconcile-after", "10ms",
                    "lane-buffer", 0,
                    "heartbeat-interval", "soon")),
            CdcSettings::read);
    assertThat(problems)
        .extracting(SettingsProblem::toString)
        .anySatisfy(p -> assertThat(p).contains("source.cdc.slot-name").contains("Orders-Slot"))
        .anySatisfy(
            p -> assertThat(p).contains("source.cdc.on-slot-loss").contains("fail | recreate"))
        .anySatisfy(
            p -> assertThat(p).contains("source.cdc.reconcile-after").contains("off (or 0)"))
        .anySatisfy(p -> assertThat(p).contains("source.cdc.lane-buffer").contains(">= 1, not 0"))
        .anySatisfy(p -> assertThat(p).contains("source.cdc.heartbeat-interval").contains("soon"))
        .hasSize(5);
    assertThatThrownBy(() -> CdcSettingsTest.named(context(Map.of("lane-buffer", 0)), "shop"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lane-buffer");
  }

  @Test
  void leaseIsRenewedAtLeastThreeTimesPerLeaseTimeout() {
    CdcSettings s = CdcSettingsTest.named(context(Map.of()), "shop");
    assertThat(s.leaseTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(s.leadershipCheckInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(s.fenceWait()).isEqualTo(Duration.ofSeconds(2));
    assertThat(
            SettingsReader.problems(
                context(Map.of("lease-timeout", "2s", "leadership-check-interval", "1s")),
                CdcSettings::read))
        .extracting(SettingsProblem::toString)
        .singleElement()
        .satisfies(
            p ->
                assertThat(p)
                    .contains("source.cdc.leadership-check-interval")
                    .contains("2000 ms")
                    .contains("1000 ms"));
  }

  @Test
  void longDerivedNamesStayDistinctWithin63Characters() {
    String a = CdcSettings.derivedName("d".repeat(60), "orders");
    String b = CdcSettings.derivedName("d".repeat(60), "payments");
    assertThat(a).hasSize(63).matches("[a-z0-9_]+");
    assertThat(b).hasSize(63).isNotEqualTo(a);
    assertThat(CdcSettings.derivedName("Shop-DB", "Orders.EU"))
        .isEqualTo("outbox_relay_shop_db_orders_eu");
  }
}
