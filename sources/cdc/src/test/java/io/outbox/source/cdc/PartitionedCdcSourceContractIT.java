package io.outbox.source.cdc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.Source;
import io.outbox.relay.spi.SourceException;
import io.outbox.schema.PartitionedLayout;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The CDC source passes {@link io.outbox.testkit.SourceContract} on a partitioned outbox ({@code
 * layout = partitioned}) whose partitions take 1,000 ids each, so that the contract's rows spread
 * over them: the publication it creates sends the partitions' inserts under the table's name.
 */
class PartitionedCdcSourceContractIT extends CdcSourceContractIT {

  @BeforeEach
  @Override
  void createDatabase() throws SQLException {
    fx = new CdcFixture("cdc_partitioned", new PartitionedLayout(3, 1000));
    try (Connection c = fx.db.connect();
        Statement s = c.createStatement()) {
      s.execute("SELECT setval('outbox_id_seq', 990)"); // the rows cross into the next partition
    }
  }

  @Test
  void aPublicationOfThePartitionsUnderTheirOwnNamesIsRefusedWithTheFix() throws SQLException {
    try (Connection c = fx.db.connect();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE PUBLICATION \"" + fx.slot() + "\" FOR TABLE outbox WITH (publish = 'insert')");
    }
    Source source = newSource(1);

    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining(
            "publication "
                + fx.slot()
                + " publishes the partitions of public.outbox under their own names, which the"
                + " stream does not read; ALTER PUBLICATION "
                + fx.slot()
                + " SET (publish_via_partition_root = true)");
    source.close();
  }
}
