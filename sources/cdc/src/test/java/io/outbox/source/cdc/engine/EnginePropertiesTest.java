package io.outbox.source.cdc.engine;

import static io.outbox.source.cdc.CdcTestSettings.context;
import static io.outbox.source.cdc.CdcTestSettings.database;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.client.OutboxTables;
import io.outbox.source.cdc.CdcConnections;
import io.outbox.source.cdc.CdcSettings;
import io.outbox.source.cdc.CdcTestSettings;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The engine's properties: what the relay owns of them, and what it leaves to the user. */
class EnginePropertiesTest {

  @Test
  void everySessionAndTheEngineGetTheSocketTimeoutUnlessTheUserSetOne() {
    CdcSettings s = CdcTestSettings.named(context(Map.of("socket-timeout", "7500ms")), "shop");
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
        CdcTestSettings.named(
            context(Map.of("debezium", Map.of("database.socketTimeout", "0"))), "shop");
    assertThat(engine(debeziumSet).getProperty("database.socketTimeout")).isEqualTo("0");
  }

  @Test
  void theEngineStreamsOnlyTheKeyColumnsAndConvertsTimestampsToMicrosUnlessTheUserChoseOtherwise() {
    CdcSettings s = CdcTestSettings.named(context(Map.of()), "shop");
    Properties p = engine(s);
    assertThat(p.getProperty("converters")).isEqualTo(EpochMicrosConverter.NAME);
    assertThat(p.getProperty(EpochMicrosConverter.NAME + ".type"))
        .isEqualTo(EpochMicrosConverter.class.getName());
    assertThat(p.getProperty("column.include.list"))
        .isEqualTo("public\\.outbox\\.(id|aggregate_type|aggregate_id|available_at)");
    assertThat(p.getProperty("column.exclude.list")).isNull();

    CdcSettings own =
        CdcTestSettings.named(
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
    CdcSettings s = CdcTestSettings.named(context(Map.of()), "shop");
    Properties p = engine(s);
    assertThat(p.getProperty("database.socketFactory"))
        .isEqualTo(EngineSockets.Factory.class.getName());
    assertThat(p.getProperty("database.socketFactoryArg")).isEqualTo("k");
    CdcSettings own =
        CdcTestSettings.named(
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
}
