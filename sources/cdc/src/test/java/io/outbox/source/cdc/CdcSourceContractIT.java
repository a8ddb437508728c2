package io.outbox.source.cdc;

import io.outbox.relay.spi.Source;
import io.outbox.testkit.SourceContract;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;

/** The CDC source passes {@link SourceContract} against the real PostgreSQL (wal_level logical). */
class CdcSourceContractIT extends SourceContract {
  CdcFixture fx;

  @BeforeEach
  void createDatabase() throws SQLException {
    fx = new CdcFixture("cdc_contract");
  }

  @Override
  protected Source newSource(int lanes) {
    return fx.source(lanes, Map.of(), new CopyOnWriteArrayList<>());
  }

  @Override
  protected Connection connect() throws SQLException {
    return fx.db.connect();
  }

  @Override
  protected void cleanUp() {
    fx.close();
  }
}
