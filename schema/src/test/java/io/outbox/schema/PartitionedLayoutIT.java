package io.outbox.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.client.OutboxTables;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class PartitionedLayoutIT {

  private static final OutboxTables TABLES = OutboxTables.of("outbox", "outbox_dead_letter");
  private static final String INSERT =
      "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
          + " VALUES ('order', 'o-1', 'Created', '{}')";

  private TestDatabase db;

  @BeforeEach
  void createDatabase() {
    db = TestDatabase.create("schema_partitioned");
  }

  @AfterEach
  void dropDatabase() {
    db.close();
  }

  private MigrationResult migrate(PartitionedLayout layout) {
    return new Migrator(TABLES, layout).migrate(db.url(), db.user(), db.password());
  }

  @Test
  void aNewOutboxIsPartitionedAndIdsTakeThePartitionsInTurn() throws SQLException {
    MigrationResult result = migrate(new PartitionedLayout(3, 1000));
    MigrationResult again = migrate(new PartitionedLayout(3, 1000));

    assertThat(result.layout()).isEqualTo(PartitionedLayout.Outcome.CREATED);
    assertThat(result.toString())
        .isEqualTo(
            "public.outbox: 8 migrations applied, now at version 8; now partitioned into 3"
                + " partitions of 1000 ids taken in turn");
    assertThat(again.layout()).isEqualTo(PartitionedLayout.Outcome.ALREADY);
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      assertThat(partitions(c)).containsExactly("outbox_p0", "outbox_p1", "outbox_p2");
      s.execute("SELECT setval('outbox_id_seq', 998)");
      for (int i = 0; i < 3; i++) {
        s.execute(INSERT);
      }
      s.execute("SELECT setval('outbox_id_seq', 3999)");
      s.execute(INSERT);
      assertThat(
              Catalog.strings(c, "SELECT id || ' ' || tableoid::regclass FROM outbox ORDER BY id"))
          .containsExactly("999 outbox_p0", "1000 outbox_p0", "1001 outbox_p1", "4000 outbox_p0");
      // The relay's indexes, on every partition; the keys per partition.
      assertThat(
              Catalog.strings(
                  c, "SELECT indexname FROM pg_indexes WHERE tablename = 'outbox_p1' ORDER BY 1"))
          .containsExactlyInAnyOrder(
              "outbox_p1_event_id_key",
              "outbox_p1_id_idx",
              "outbox_p1_pkey",
              "outbox_p1_published_at_idx",
              "outbox_p1_aggregate_type_aggregate_id_id_idx");
      assertThat(
              Catalog.count(
                  c,
                  "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'outbox'::regclass AND tgname = 'outbox_relay_notify'"))
          .isEqualTo(1);
    }
  }

  /**
   * A partitioned table cannot build an index {@code CONCURRENTLY}: settling by position indexes
   * each partition so and attaches it, whether the outbox was partitioned first or converted with
   * the indexes and the check (NOT VALID, a row from before without tx kept) it had.
   */
  @Test
  void settlingByPositionIndexesEachPartitionAndKeepsAConvertedTablesRows() throws SQLException {
    OutboxTables tables = TABLES;
    PartitionedLayout layout = new PartitionedLayout(2, 1000);
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      new Migrator(tables).migrate(db.url(), db.user(), db.password());
      s.execute(INSERT.replace("payload)", "payload, tx)").replace("'{}')", "'{}', NULL)"));
      new Migrator(tables, null, true).migrate(db.url(), db.user(), db.password());
      // Converted with its indexes and check, then indexed again: nothing left to do.
      new Migrator(tables, layout, true).migrate(db.url(), db.user(), db.password());
      assertThat(positionIndexes(c))
          .containsExactly(
              "outbox_exception_idx true outbox_p0:true,outbox_p1:true,outbox_p_before:true",
              "outbox_tx_idx true outbox_p0:true,outbox_p1:true,outbox_p_before:true");
      assertThat(Catalog.count(c, "SELECT count(*) FROM outbox WHERE tx IS NULL")).isEqualTo(1);
      assertThatThrownBy(
              () ->
                  s.execute(
                      INSERT.replace("payload)", "payload, tx)").replace("'{}')", "'{}', NULL)")))
          .hasMessageContaining("outbox_tx_check");
    }

    // Partitioned first, then indexed by position; a partition's index left invalid by a failed
    // build is built again.
    try (TestDatabase other = TestDatabase.create("schema_partitioned_position");
        Connection c = other.connect();
        Statement s = c.createStatement()) {
      new Migrator(tables, layout).migrate(other.url(), other.user(), other.password());
      s.execute("CREATE INDEX outbox_tx_idx ON ONLY outbox (tx)");
      s.execute("CREATE INDEX outbox_p1_tx_idx ON outbox_p1 (tx)");
      s.execute(
          "UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'outbox_p1_tx_idx'::regclass");
      new Migrator(tables, layout, true).migrate(other.url(), other.user(), other.password());
      new Migrator(tables, layout, true).migrate(other.url(), other.user(), other.password());
      assertThat(positionIndexes(c))
          .containsExactly(
              "outbox_exception_idx true outbox_p0:true,outbox_p1:true",
              "outbox_tx_idx true outbox_p0:true,outbox_p1:true");
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT indexrelid::regclass::text FROM pg_index"
                      + " WHERE indrelid = 'outbox_p1'::regclass AND indexrelid::regclass::text"
                      + " LIKE '%tx_idx%'"))
          .as("the invalid index was built again, not left beside a new one")
          .containsExactly("outbox_p1_tx_idx");
      s.execute(INSERT);
      assertThat(Catalog.count(c, "SELECT count(*) FROM outbox WHERE tx IS NOT NULL")).isEqualTo(1);
    }
  }

  /**
   * The indexes on tx and of the exceptions: name, whether valid, and each partition's index
   * attached to it with whether that is valid.
   */
  private static List<String> positionIndexes(Connection c) throws SQLException {
    return Catalog.strings(
        c,
        "SELECT p.relname || ' ' || pi.indisvalid || ' '"
            + " || string_agg(t.relname || ':' || ci.indisvalid, ',' ORDER BY t.relname)"
            + " FROM pg_class p JOIN pg_index pi ON pi.indexrelid = p.oid"
            + " LEFT JOIN pg_inherits h ON h.inhparent = p.oid"
            + " LEFT JOIN pg_index ci ON ci.indexrelid = h.inhrelid"
            + " LEFT JOIN pg_class t ON t.oid = ci.indrelid"
            + " WHERE p.relname IN ('outbox_tx_idx', 'outbox_exception_idx')"
            + " GROUP BY p.relname, pi.indisvalid ORDER BY 1");
  }

  @Test
  void anOutboxWithRowsKeepsThemAndItsGrantsPublicationAndNumbering() throws SQLException {
    new Migrator(TABLES).migrate(db.url(), db.user(), db.password());
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      for (int i = 0; i < 3; i++) {
        s.execute(INSERT);
      }
      s.execute("UPDATE outbox SET published_at = now() WHERE id = 1");
      s.execute("DROP ROLE IF EXISTS part_app");
      s.execute("DROP ROLE IF EXISTS part_relay");
      s.execute("CREATE ROLE part_app LOGIN PASSWORD 'app'");
      s.execute("CREATE ROLE part_relay LOGIN PASSWORD 'relay'");
      s.execute("GRANT INSERT ON outbox TO part_app");
      s.execute("GRANT SELECT, UPDATE, DELETE ON outbox TO part_relay");
      s.execute(
          "CREATE PUBLICATION part_pub FOR TABLE outbox (id, event_id, aggregate_type)"
              + " WITH (publish = 'insert')");
    }
    try {
      MigrationResult result = migrate(new PartitionedLayout(4, 1000));

      assertThat(result.layout()).isEqualTo(PartitionedLayout.Outcome.CONVERTED);
      assertThat(result.layoutNote())
          .endsWith("the rows it held stay in outbox_p_before until retention empties it");
      try (Connection c = db.connect()) {
        assertThat(partitions(c))
            .containsExactly("outbox_p0", "outbox_p1", "outbox_p2", "outbox_p3", "outbox_p_before");
        assertThat(
                Catalog.strings(
                    c,
                    "SELECT id || ' ' || tableoid::regclass || ' ' || (published_at IS NULL)"
                        + " FROM outbox ORDER BY id"))
            .containsExactly(
                "1 outbox_p_before false", "2 outbox_p_before true", "3 outbox_p_before true");
        assertThat(
                Catalog.strings(
                    c,
                    "SELECT pubviaroot || ' ' || (SELECT string_agg(attname, ',' ORDER BY attnum)"
                        + " FROM pg_attribute WHERE attrelid = r.prrelid"
                        + " AND attnum = ANY(r.prattrs::int2[])) || ' ' || r.prrelid::regclass"
                        + " FROM pg_publication p JOIN pg_publication_rel r ON r.prpubid = p.oid"
                        + " WHERE p.pubname = 'part_pub'"))
            .containsExactly("true id,event_id,aggregate_type outbox");
      }
      try (Connection app = as("part_app", "app");
          Statement s = app.createStatement()) {
        s.execute(INSERT); // the application's insert stays one plain INSERT
      }
      try (Connection relay = as("part_relay", "relay");
          Statement s = relay.createStatement()) {
        assertThat(
                Catalog.strings(
                    relay, "SELECT id || ' ' || tableoid::regclass FROM outbox WHERE id > 3"))
            .containsExactly("4 outbox_p0");
        s.execute("UPDATE outbox SET published_at = now() WHERE id = 4");
        s.execute("TRUNCATE outbox_p_before"); // retention empties partitions so
      }
    } finally {
      try (Connection c = db.connect();
          Statement s = c.createStatement()) {
        s.execute("DROP PUBLICATION IF EXISTS part_pub");
        s.execute("DROP OWNED BY part_app, part_relay");
        s.execute("DROP ROLE part_app");
        s.execute("DROP ROLE part_relay");
      }
    }
  }

  @Test
  void aTableAViewDependsOnIsLeftAsItWasWithTheViewNamed() throws SQLException {
    new Migrator(TABLES).migrate(db.url(), db.user(), db.password());
    List<String> before;
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute(INSERT);
      s.execute("CREATE VIEW pending_events AS SELECT id FROM outbox WHERE published_at IS NULL");
      before = Catalog.snapshot(c);
    }

    assertThatThrownBy(() -> migrate(new PartitionedLayout(4, 1000)))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining(
            "cannot partition public.outbox: views or rules use it (pending_events); nothing was"
                + " changed");
    try (Connection c = db.connect()) {
      assertThat(Catalog.snapshot(c)).isEqualTo(before);
    }
  }

  @Test
  void aTableWithARuleOrAPolicyOfItsOwnIsLeftAsItWas() throws SQLException {
    new Migrator(TABLES).migrate(db.url(), db.user(), db.password());
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("CREATE RULE no_deletes AS ON DELETE TO outbox WHERE false DO INSTEAD NOTHING");
    }

    assertThatThrownBy(() -> migrate(new PartitionedLayout(4, 1000)))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining("it has rules of its own (no_deletes)");
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute("DROP RULE no_deletes ON outbox");
      s.execute("CREATE POLICY mine ON outbox USING (true)");
    }
    assertThatThrownBy(() -> migrate(new PartitionedLayout(4, 1000)))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining("it has row security policies (mine)");
    try (Connection c = db.connect()) {
      assertThat(Catalog.strings(c, "SELECT relkind::text FROM pg_class WHERE relname = 'outbox'"))
          .containsExactly("r");
    }
  }

  @Test
  void aPartitionedOutboxIsNotReshapedInPlace() {
    migrate(new PartitionedLayout(4, 1000));

    assertThatThrownBy(() -> migrate(new PartitionedLayout(8, 1000)))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining(
            "it is partitioned into 4 partitions of 1000 ids, the settings ask for 8 of 1000; a"
                + " layout is not changed in place");
  }

  private static List<String> partitions(Connection c) throws SQLException {
    return Catalog.strings(
        c,
        "SELECT inhrelid::regclass::text FROM pg_inherits"
            + " WHERE inhparent = 'outbox'::regclass ORDER BY 1");
  }

  private Connection as(String user, String password) throws SQLException {
    return DriverManager.getConnection(db.url(), user, password);
  }
}
