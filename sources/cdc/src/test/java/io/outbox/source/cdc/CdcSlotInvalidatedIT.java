package io.outbox.source.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.SourceException;
import io.outbox.schema.Migrator;
import io.outbox.testkit.PrivatePostgres;
import io.outbox.testkit.TestCertificates;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A slot PostgreSQL invalidated ({@code wal_status = 'lost'} after {@code max_slot_wal_keep_size})
 * while the relay was stopped: warned about while it fills, named as lost, and recovered with
 * {@code on-slot-loss = recreate} (the sweep delivers what the stream lost). A private cluster with
 * a 16 MB limit.
 */
class CdcSlotInvalidatedIT {

  private CdcFixture fx;
  private PrivatePostgres pg;

  @AfterEach
  void tearDown() {
    if (fx != null) {
      fx.close();
    }
    if (pg != null) {
      pg.close();
    }
  }

  @Test
  void invalidatedSlotIsALostSlotNamedInTheErrorAndRecreateRecovers() throws Exception {
    fx = new CdcFixture("cdc_slot_invalidated");
    String password = "pw-" + UUID.randomUUID();
    pg =
        PrivatePostgres.start(
            TestCertificates.create(
                Files.createTempDirectory("cdc-invalidated-certs-"),
                "cdc-invalidated",
                TestCertificates.LOOPBACK),
            password,
            "wal_level=logical",
            "max_slot_wal_keep_size=16MB",
            "wal_keep_size=0",
            "max_wal_size=64MB");
    String url = pg.url("postgres");
    new Migrator(OutboxTables.of("outbox", "outbox_dead_letter"))
        .migrate(url, PrivatePostgres.ADMIN, password);

    CdcSource first = source(url, password, Map.of());
    first.activate();
    insert(1);
    List<Claim> claims = CdcFixture.claimAll(first, 1, 1, Duration.ofSeconds(30));
    claims.forEach(CdcFixture::publishAll);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> count("SELECT count(*) FROM outbox_relay_offsets") > 0);
    first.close(Duration.ofSeconds(10));

    // The relay is stopped; the application writes on, and so does the rest of the database.
    insert(2);
    CdcSource watching = source(url, password, Map.of("wal-keep-warning", 0.5));
    execute("CREATE TABLE filler (n int, pad text)");
    execute("INSERT INTO filler SELECT g, repeat('x', 200) FROM generate_series(1, 60000) g");
    execute("SELECT pg_switch_wal()");
    assertThat(watching.backlog().orElseThrow().walKeepShare().orElse(-1))
        .as("the share of max_slot_wal_keep_size the slot retains")
        .isGreaterThan(0.5);
    for (int round = 0; round < 20 && !"lost".equals(walStatus()); round++) {
      execute("INSERT INTO filler SELECT g, repeat('x', 200) FROM generate_series(1, 60000) g");
      execute("SELECT pg_switch_wal()");
      execute("CHECKPOINT");
    }
    assertThat(walStatus()).isEqualTo("lost");

    CdcSource refused = source(url, password, Map.of());
    assertThatThrownBy(refused::activate)
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("replication slot " + slot() + " was invalidated")
        .hasMessageContaining("wal_status = 'lost'")
        .hasMessageContaining("max_slot_wal_keep_size = 16MB")
        .hasMessageContaining("on-slot-loss = recreate");
    refused.close(Duration.ofSeconds(10));

    CdcSource recreating =
        source(url, password, Map.of("on-slot-loss", "recreate", "reconcile-after", "1s"));
    recreating.activate();
    assertThat(walStatus()).as("a new slot").isNotEqualTo("lost");
    insert(3);
    await()
        .atMost(Duration.ofSeconds(40))
        .until(
            () -> {
              Claim c = recreating.claim(0, 100, Duration.ofMillis(200));
              if (c.events().isEmpty()) {
                c.release();
              } else {
                CdcFixture.publishAll(c);
              }
              return count("SELECT count(*) FROM outbox WHERE published_at IS NULL") == 0;
            });
    assertThat(count("SELECT count(*) FROM outbox")).isEqualTo(3);
  }

  private CdcSource source(String url, String password, Map<String, ?> overrides) {
    Map<String, Object> all = new HashMap<>(overrides);
    all.put("debezium", Map.of("database.sslmode", "require"));
    return fx.source(url, PrivatePostgres.ADMIN, password, all);
  }

  private String slot() {
    return CdcSettings.derivedName("postgres", CdcFixture.PIPELINE);
  }

  private String walStatus() throws SQLException {
    try (Connection c = pg.connectAsAdmin("postgres");
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT wal_status FROM pg_replication_slots WHERE slot_name = '" + slot() + "'")) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  private void insert(int seq) throws SQLException {
    try (Connection c = pg.connectAsAdmin("postgres")) {
      fx.writer.write(c, CdcFixture.event("k", seq));
    }
  }

  private long count(String sql) throws SQLException {
    try (Connection c = pg.connectAsAdmin("postgres");
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void execute(String sql) throws SQLException {
    try (Connection c = pg.connectAsAdmin("postgres");
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
