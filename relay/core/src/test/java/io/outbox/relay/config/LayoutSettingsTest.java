package io.outbox.relay.config;

import static io.outbox.relay.config.ConfigFiles.ORDERS;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.DatabaseSettings.Partitions;
import io.outbox.relay.spi.SettingsProblem;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code layout} and {@code partitions.*} of a pipeline: defaults, the partitioned layout, errors.
 */
class LayoutSettingsTest {

  @TempDir Path dir;

  private Partitions partitions(String extra) {
    return new ConfigFiles(dir)
        .load(ORDERS + extra)
        .settings()
        .pipelines()
        .get("orders")
        .database()
        .partitions();
  }

  @Test
  void theDefaultIsOnePlainTable() {
    assertThat(partitions("")).isEqualTo(Partitions.PLAIN);
    assertThat(partitions("").partitioned()).isFalse();
  }

  @Test
  void partitionedTakesItsShapeFromPartitions() {
    assertThat(partitions("outbox-relay.pipelines.orders.layout = partitioned\n"))
        .isEqualTo(new Partitions(4, 1_000_000));
    assertThat(
            partitions(
                "outbox-relay.pipelines.orders { layout = partitioned, partitions { count = 8,"
                    + " size = 50000 } }\n"))
        .isEqualTo(new Partitions(8, 50_000));
  }

  @Test
  void badValuesAreReportedTogetherWithTheirKeys() {
    List<SettingsProblem> problems =
        new ConfigFiles(dir)
            .problems(
                ORDERS
                    + "outbox-relay.pipelines.orders { layout = sharded, partitions { count = 1,"
                    + " size = 10 } }\n");

    assertThat(problems)
        .extracting(p -> p.path() + ": " + p.message())
        .hasSize(3)
        .anySatisfy(m -> assertThat(m).startsWith("outbox-relay.pipelines.orders.layout: "))
        .anySatisfy(
            m -> assertThat(m).startsWith("outbox-relay.pipelines.orders.partitions.count: "))
        .anySatisfy(
            m -> assertThat(m).startsWith("outbox-relay.pipelines.orders.partitions.size: "));
  }
}
