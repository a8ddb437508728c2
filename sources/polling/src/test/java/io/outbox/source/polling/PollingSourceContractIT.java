package io.outbox.source.polling;

import io.outbox.relay.spi.Source;
import io.outbox.testkit.SourceContract;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.BeforeEach;

/** The polling source passes {@link SourceContract} against the real PostgreSQL. */
class PollingSourceContractIT extends SourceContract {
  PollingFixture fx;

  @BeforeEach
  void createDatabase() throws SQLException {
    fx = PollingFixture.create("contract");
  }

  @Override
  protected Source newSource(int lanes) {
    return fx.source(lanes);
  }

  @Override
  protected Connection connect() throws SQLException {
    return fx.db.connect();
  }

  @Override
  protected void cleanUp() throws SQLException {
    fx.close();
  }
}
