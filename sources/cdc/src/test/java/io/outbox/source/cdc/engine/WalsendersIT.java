package io.outbox.source.cdc.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.source.cdc.CdcFixture;
import io.outbox.testkit.Teardown;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;

/**
 * What PostgreSQL says about the replication connection of a session's engine: the walsender noted
 * while it streams the slot is reported connected until that connection closes, then gone.
 */
class WalsendersIT {

  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  @Test
  void aNotedWalsenderIsConnectedUntilItsReplicationConnectionCloses() throws Exception {
    Walsenders walsenders = walsendersOfANewSlot("cdc_walsenders");
    String slot = fx.slot();
    assertThat(walsenders.stillConnected()).as("nothing noted yet").isEmpty();

    try (Connection replication = replicationConnection();
        PGReplicationStream stream = stream(replication, slot)) {
      await()
          .alias("the slot is streamed")
          .atMost(Duration.ofSeconds(30))
          .until(() -> fx.walsender() > 0);
      assertThat(walsenders.noteStreaming()).as("new").isNotNull();
      assertThat(walsenders.noteStreaming()).as("noted before").isNull();
      assertThat(walsenders.stillConnected())
          .singleElement()
          .extracting(Walsenders.Walsender::pid)
          .isEqualTo((int) fx.walsender());
      stream.readPending(); // the stream is used, not just opened
    }
    await()
        .alias("the walsender is gone once its connection closed")
        .atMost(Duration.ofSeconds(30))
        .until(() -> walsenders.stillConnected().isEmpty());
    assertThat(fx.walsender()).as("nobody streams the slot").isZero();
  }

  @Test
  void aWalsenderLeftConnectedIsEndedByTheSession() throws Exception {
    Walsenders walsenders = walsendersOfANewSlot("cdc_walsenders_end");
    String slot = fx.slot();
    Connection replication = replicationConnection();
    try {
      stream(replication, slot); // left open: the session ends it
      await().atMost(Duration.ofSeconds(30)).until(() -> fx.walsender() > 0);
      walsenders.noteStreaming();

      assertThat(walsenders.endStillConnected()).isEqualTo(1);
      await()
          .alias("the slot is free")
          .atMost(Duration.ofSeconds(30))
          .until(() -> fx.walsender() == 0 && walsenders.stillConnected().isEmpty());
      assertThat(walsenders.endStillConnected()).as("nothing left to end").isZero();
    } finally {
      try {
        replication.close();
      } catch (SQLException e) {
        // ended by the server
      }
    }
  }

  /** A fixture with a slot and a publication to stream, and the walsenders of that slot. */
  private Walsenders walsendersOfANewSlot(String database) throws SQLException {
    fx = teardown.add(new CdcFixture(database));
    fx.execute("CREATE PUBLICATION walsenders_it FOR TABLE outbox");
    fx.execute("SELECT pg_create_logical_replication_slot('" + fx.slot() + "', 'pgoutput')");
    return new Walsenders(fx.db::connect, fx.slot());
  }

  /** Streams {@code slot} on {@code replication}, as the engine does. */
  private static PGReplicationStream stream(Connection replication, String slot)
      throws SQLException {
    return replication
        .unwrap(PGConnection.class)
        .getReplicationAPI()
        .replicationStream()
        .logical()
        .withSlotName(slot)
        .withStartPosition(LogSequenceNumber.INVALID_LSN)
        .withSlotOption("proto_version", "1")
        .withSlotOption("publication_names", "walsenders_it")
        .withStatusInterval(1, TimeUnit.SECONDS)
        .start();
  }

  private Connection replicationConnection() throws SQLException {
    Properties p = new Properties();
    PGProperty.USER.set(p, fx.db.user());
    if (fx.db.password() != null) {
      PGProperty.PASSWORD.set(p, fx.db.password());
    }
    PGProperty.ASSUME_MIN_SERVER_VERSION.set(p, "10");
    PGProperty.REPLICATION.set(p, "database");
    PGProperty.PREFER_QUERY_MODE.set(p, "simple");
    return DriverManager.getConnection(fx.db.url(), p);
  }
}
