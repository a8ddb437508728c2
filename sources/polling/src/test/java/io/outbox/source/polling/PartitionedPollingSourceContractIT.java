package io.outbox.source.polling;

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
    fx = PollingFixture.createAcrossPartitions("partitioned", false);
  }
}
