package io.outbox.relay.config;

import static io.outbox.relay.config.ConfigFiles.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RelayConfigLoaderTest {

  @TempDir Path dir;

  @Test
  void buildsEveryPipelineFromReferenceDefaults() {
    RelaySettings s = new ConfigFiles(dir).load(ORDERS).settings();

    assertThat(s.http())
        .isEqualTo(new RelaySettings.HttpSettings("127.0.0.1", 9400, Duration.ofSeconds(10)));
    assertThat(s.shutdownTimeout()).isEqualTo(Duration.ofSeconds(30));
    PipelineSettings p = s.pipelines().get("orders");
    assertThat(p.name()).isEqualTo("orders");
    assertThat(p.path()).isEqualTo("outbox-relay.pipelines.orders");
    assertThat(p.database().url()).isEqualTo("jdbc:postgresql://127.0.0.1:5432/app");
    assertThat(p.database().user()).isNull();
    assertThat(p.database().password()).isNull();
    assertThat(p.database().properties()).isEmpty();
    assertThat(p.database().table()).isEqualTo("outbox");
    assertThat(p.database().deadLetterTable()).isEqualTo("outbox_dead_letter");
    assertThat(p.database().onPublish()).isEqualTo(OnPublish.MARK);
    assertThat(p.database().pipeline()).isEqualTo("orders");
    assertThat(p.sourceType()).isEqualTo("fake");
    assertThat(p.sourceSettings().getDuration("poll-interval")).isEqualTo(Duration.ofSeconds(1));
    assertThat(p.sinkType()).isEqualTo("fake");
    assertThat(p.sinkSettings().getString("servers")).isEqualTo("localhost:1");
    assertThat(p.destinationTemplate()).isEqualTo("outbox.${aggregate_type}");
    assertThat(p.retry())
        .isEqualTo(
            new PipelineSettings.RetrySettings(
                10,
                new PipelineSettings.Backoff(
                    Duration.ofSeconds(1), Duration.ofMinutes(5), 2.0, 0.2)));
    assertThat(p.reconnect())
        .isEqualTo(
            new PipelineSettings.Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), 2.0, 0.2));
    assertThat(p.lanes()).isEqualTo(2);
    assertThat(p.batchSize()).isEqualTo(500);
    assertThat(p.deadLetterDestination()).isNull();
  }

  @Test
  void mergesPipelineDefaultsUnderEveryPipelineAndKeepsFileOrder() {
    RelaySettings s =
        new ConfigFiles(dir)
            .load(
                """
                outbox-relay {
                  pipeline-defaults {
                    database.url = "jdbc:postgresql://db/app"
                    source.type = fake
                    sink.type = fake
                    lanes = 8
                  }
                  pipelines {
                    zeta { table = "zeta.outbox", on-publish = delete }
                    alpha { lanes = 3, retry.max-attempts = 3, batch-size = 10000 }
                  }
                }
                """)
            .settings();

    assertThat(s.pipelines().keySet()).containsExactly("zeta", "alpha");
    assertThat(s.pipelines().get("zeta").lanes()).isEqualTo(8);
    assertThat(s.pipelines().get("zeta").database().table()).isEqualTo("zeta.outbox");
    assertThat(s.pipelines().get("zeta").database().onPublish()).isEqualTo(OnPublish.DELETE);
    assertThat(s.pipelines().get("alpha").lanes()).isEqualTo(3);
    assertThat(s.pipelines().get("alpha").retry().maxAttempts()).isEqualTo(3);
    assertThat(s.pipelines().get("alpha").batchSize()).isEqualTo(10000);
    assertThat(s.pipelines().get("alpha").database().url()).isEqualTo("jdbc:postgresql://db/app");
  }

  @Test
  void substitutesEnvironmentVariablesAnywhere() {
    ConfigFiles files =
        new ConfigFiles(
            dir, Map.of("APP_DB_PASSWORD", "s3cret", "APP_DB_URL", "jdbc:postgresql://env/app"));
    PipelineSettings p =
        files
            .load(
                ORDERS
                    + """
                    outbox-relay.pipelines.orders.database {
                      url = ${?APP_DB_URL}
                      password = ${?APP_DB_PASSWORD}
                      user = ${?APP_DB_USER}
                    }
                    """)
            .settings()
            .pipelines()
            .get("orders");

    assertThat(p.database().password()).isEqualTo("s3cret");
    assertThat(p.database().url()).isEqualTo("jdbc:postgresql://env/app");
    assertThat(p.database().user()).as("unset optional variable leaves the default").isNull();
  }

  @Test
  void optionalVariableThatIsUnsetKeepsTheDefault() {
    PipelineSettings p =
        new ConfigFiles(dir)
            .load(
                ORDERS + "outbox-relay.pipelines.orders.database.password = ${?APP_DB_PASSWORD}\n")
            .settings()
            .pipelines()
            .get("orders");

    assertThat(p.database().password()).isNull();
  }

  @Test
  void requiredVariableThatIsUnsetIsAProblemWithFileAndLine() {
    ConfigFiles files = new ConfigFiles(dir);
    Path file =
        files.write(ORDERS + "outbox-relay.pipelines.orders.database.user = ${APP_DB_USER}\n");

    assertThatThrownBy(() -> files.loader().load(file))
        .isInstanceOf(ConfigProblemsException.class)
        .hasMessageContaining(file + ":6")
        .hasMessageContaining("APP_DB_USER")
        .hasMessageContaining("${?VAR}");
  }

  @Test
  void acceptsAnythingInsideFreeFormMaps() {
    PipelineSettings p =
        new ConfigFiles(dir)
            .load(
                ORDERS
                    + """
                    outbox-relay.pipelines.orders {
                      database.properties { sslmode = require, connectTimeout = 5, ssl { factory = x } }
                      sink.fake.client { "max.in.flight" = 5, whatever { nested = true } }
                    }
                    """)
            .settings()
            .pipelines()
            .get("orders");

    assertThat(p.database().properties())
        .containsOnly(
            Map.entry("sslmode", "require"),
            Map.entry("connectTimeout", "5"),
            Map.entry("ssl.factory", "x"));
    assertThat(p.sinkSettings().getInt("client.\"max.in.flight\"")).isEqualTo(5);
  }

  @Test
  void aFreeFormMapWithDefaultsKeepsThemAndAcceptsAnyOtherKey() {
    PipelineSettings p =
        new ConfigFiles(dir)
            .load(
                ORDERS
                    + """
                    outbox-relay.pipeline-defaults.sink.fake.tuning { "compression.type" = zstd }
                    outbox-relay.pipelines.orders.sink.fake.tuning { batch.size = 7 }
                    """)
            .settings()
            .pipelines()
            .get("orders");

    assertThat(p.sinkSettings().getInt("tuning.linger.ms")).isEqualTo(5);
    assertThat(p.sinkSettings().getString("tuning.\"compression.type\"")).isEqualTo("zstd");
    assertThat(p.sinkSettings().getInt("tuning.batch.size")).isEqualTo(7);
  }

  @Test
  void loadsAnInMemoryConfig() {
    LoadedConfig loaded =
        new ConfigFiles(dir)
            .loader()
            .load(com.typesafe.config.ConfigFactory.parseString(ORDERS), "test");

    assertThat(loaded.source()).isEqualTo("test");
    assertThat(loaded.settings().pipelines()).containsKey("orders");
    assertThat(loaded.effective().hasPath("pipeline-defaults")).isFalse();
    assertThat(loaded.effective().getInt("pipelines.orders.lanes")).isEqualTo(2);
  }
}
