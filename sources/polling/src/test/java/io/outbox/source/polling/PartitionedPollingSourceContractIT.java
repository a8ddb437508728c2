package io.outbox.source.polling;

import io.outbox.schema.PartitionedLayout;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.BeforeEach;

/**
 * The polling source passes {@link io.outbox.testkit.SourceContract} on a partitioned outbox
 * ({@code layout = partitioned}) whose partitions take 1,000 ids each, so that the contract's rows
 * spread over them.
 */
class PartitionedPollingSourceContractIT extends PollingSourceContractIT {

  @BeforeEach
  @Override
  void createDatabase() throws SQLException {
    fx = PollingFixture.create("partitioned", new PartitionedLayout(3, 1000));
    try (Connection c = fx.db.connect()) {
      // Ids from 990 on: the rows cross from the first partition into the second.
      c.createStatement().execute("SELECT setval('outbox_id_seq', 990)");
    }
  }
}
