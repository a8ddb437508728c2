package io.outbox.source.polling;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.Source;
import io.outbox.source.postgres.LanePositions;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;

/**
 * The polling source passes {@link io.outbox.testkit.SourceContract} settling by position ({@code
 * on-publish = position}): a published row gets no write, and is settled when its lane's position
 * covers it ({@link LanePositions}).
 */
class PositionPollingSourceContractIT extends PollingSourceContractIT {

  @BeforeEach
  @Override
  void createDatabase() throws SQLException {
    fx = PollingFixture.createByPosition("position");
  }

  @Override
  protected Source newSource(int lanes) {
    return fx.source(lanes, OnPublish.POSITION, Map.of(), new CopyOnWriteArrayList<>());
  }

  /** The pending rows {@code status} and the pending gauge count: they read the positions. */
  @Override
  protected long pending() throws SQLException {
    OutboxTables tables = OutboxTables.of("outbox", "outbox_dead_letter");
    try (Connection c = connect()) {
      return LanePositions.status(tables).backlog(c, PollingFixture.PIPELINE).pending();
    }
  }
}
