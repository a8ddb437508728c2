package io.outbox.source.polling;

import java.sql.SQLException;
import org.junit.jupiter.api.BeforeEach;

/**
 * The polling source passes {@link io.outbox.testkit.SourceContract} settling by position on a
 * partitioned outbox ({@code layout = partitioned}, 1,000 ids per partition): the windows read the
 * rows of every partition through each one's index on tx.
 */
class PartitionedPositionPollingSourceContractIT extends PositionPollingSourceContractIT {

  @BeforeEach
  @Override
  void createDatabase() throws SQLException {
    fx = PollingFixture.createAcrossPartitions("partitioned_position", true);
  }
}
