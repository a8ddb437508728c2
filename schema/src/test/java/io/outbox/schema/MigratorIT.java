package io.outbox.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

class MigratorIT {

  private TestDatabase db;

  @BeforeEach
  void createDatabase() {
    db = TestDatabase.create("schema_migrator");
  }

  @AfterEach
  void dropDatabase() {
    db.close();
  }

  private MigrationResult migrate(OutboxTables tables) {
    return new Migrator(tables).migrate(db.url(), db.user(), db.password());
  }

  @Test
  void secondMigrationAppliesNothingAndChangesNothing() throws SQLException {
    OutboxTables tables = OutboxTables.of("outbox", "outbox_dead_letter");

    MigrationResult first = migrate(tables);
    List<String> before;
    long historyRows;
    try (Connection c = db.connect()) {
      before = Catalog.snapshot(c);
      historyRows = Catalog.count(c, "SELECT count(*) FROM public.outbox_relay_schema_history");
    }
    MigrationResult second = migrate(tables);

    assertThat(first.applied()).isEqualTo(8);
    assertThat(first.version()).isEqualTo("8");
    assertThat(second.applied()).isZero();
    assertThat(second.version()).isEqualTo("8");
    assertThat(second).hasToString("public.outbox: 0 migrations applied, now at version 8");
    try (Connection c = db.connect()) {
      assertThat(Catalog.snapshot(c)).isEqualTo(before);
      assertThat(Catalog.count(c, "SELECT count(*) FROM public.outbox_relay_schema_history"))
          .isEqualTo(historyRows);
      assertThat(Catalog.tables(c))
          .containsExactly(
              "public.outbox",
              "public.outbox_dead_letter",
              "public.outbox_relay_leader",
              "public.outbox_relay_ledger",
              "public.outbox_relay_offsets",
              "public.outbox_relay_position",
              "public.outbox_relay_schema_history");
    }
  }

  @Test
  void createsTablesIndexesAndTriggerInACustomSchema() throws SQLException {
    OutboxTables tables = OutboxTables.of("billing.events_outbox", "billing.events_dead");

    MigrationResult result = migrate(tables);

    assertThat(result.applied()).isEqualTo(8);
    try (Connection c = db.connect()) {
      assertThat(Catalog.tables(c))
          .containsExactly(
              "billing.events_dead",
              "billing.events_outbox",
              "billing.events_outbox_relay_leader",
              "billing.events_outbox_relay_ledger",
              "billing.events_outbox_relay_offsets",
              "billing.events_outbox_relay_position",
              "billing.events_outbox_relay_schema_history");
      assertThat(Catalog.indexes(c, "billing"))
          .map(line -> line.substring(0, line.indexOf(':')))
          .containsExactly(
              "events_dead_dead_lettered_at_idx",
              "events_dead_event_id_idx",
              "events_dead_pkey",
              "events_outbox_event_id_key",
              "events_outbox_pending_idx",
              "events_outbox_pkey",
              "events_outbox_published_idx",
              "events_outbox_relay_leader_pkey",
              "events_outbox_relay_ledger_pkey",
              "events_outbox_relay_offsets_pkey",
              "events_outbox_relay_position_pkey",
              "events_outbox_relay_schema_history_pk",
              "events_outbox_relay_schema_history_s_idx",
              "events_outbox_retrying_idx");
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT trigger_name || ' ' || action_timing || ' ' || event_manipulation || ' '"
                      + " || action_orientation || ' ' || action_statement"
                      + " FROM information_schema.triggers"
                      + " WHERE event_object_schema = 'billing'"
                      + " AND event_object_table = 'events_outbox'"))
          .containsExactly(
              "outbox_relay_notify AFTER INSERT STATEMENT"
                  + " EXECUTE FUNCTION billing.outbox_relay_notify_events_outbox()");
      assertThat(Catalog.tables(c)).noneMatch(t -> t.startsWith("public."));
    }
  }

  @Test
  void eachRowRecordsTheTransactionThatInsertedIt() throws SQLException {
    migrate(OutboxTables.of("outbox"));

    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      try (var s = c.createStatement()) {
        s.execute(
            "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)"
                + " VALUES ('order', '1', 'Created', '{}'), ('order', '2', 'Created', '{}')");
        assertThat(
                Catalog.strings(
                    c, "SELECT (tx = pg_current_xact_id())::text FROM outbox ORDER BY id"))
            .containsExactly("true", "true");
      }
      c.commit();
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT column_name || ' ' || data_type || ' ' || is_nullable || ' '"
                      + " || column_default FROM information_schema.columns"
                      + " WHERE table_name = 'outbox' AND column_name = 'tx'"))
          .containsExactly("tx xid8 YES pg_current_xact_id()");
    }
  }

  @Test
  void settlingByPositionAddsTheIndexOnTxAndRefusesANewRowWithoutTx() throws SQLException {
    OutboxTables tables = OutboxTables.of("outbox");
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      migrate(tables);
      s.execute(
          "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, tx)"
              + " VALUES ('order', 'before', 'Created', '{}', NULL)");
      new Migrator(tables, null, true).migrate(db.url(), db.user(), db.password());
      new Migrator(tables, null, true).migrate(db.url(), db.user(), db.password()); // idempotent

      assertThat(
              Catalog.strings(
                  c,
                  "SELECT indexdef || ' ' || i.indisvalid FROM pg_indexes x"
                      + " JOIN pg_index i ON i.indexrelid = to_regclass(x.indexname)"
                      + " WHERE x.indexname = 'outbox_tx_idx'"))
          .containsExactly("CREATE INDEX outbox_tx_idx ON public.outbox USING btree (tx) true");
      assertThat(
              Catalog.strings(
                  c, "SELECT indexdef FROM pg_indexes WHERE indexname = 'outbox_exception_idx'"))
          .containsExactly(
              "CREATE INDEX outbox_exception_idx ON public.outbox USING btree (id) WHERE"
                  + " ((published_at IS NULL) AND (next_attempt_at IS NOT NULL))");
      assertThat(Catalog.count(c, "SELECT count(*) FROM outbox WHERE tx IS NULL"))
          .as("a row from before is kept: the check is NOT VALID")
          .isEqualTo(1);
      assertThatThrownBy(
              () ->
                  s.execute(
                      "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, tx)"
                          + " VALUES ('order', 'after', 'Created', '{}', NULL)"))
          .hasMessageContaining("outbox_tx_check");
    }
    String script = new Migrator(tables, null, true).script();
    assertThat(script)
        .contains("CREATE INDEX IF NOT EXISTS \"outbox_tx_idx\" ON \"public\".\"outbox\" (tx);")
        .contains("CHECK (tx IS NOT NULL) NOT VALID");
    try (TestDatabase other = TestDatabase.create("schema_position_script");
        Connection scripted = other.connect()) {
      scripted.setAutoCommit(false);
      try (Statement statement = scripted.createStatement()) {
        statement.execute(script);
        statement.execute(script); // idempotent, as the script says
      }
      scripted.commit();
      assertThat(
              Catalog.count(
                  scripted, "SELECT count(*) FROM pg_indexes WHERE indexname = 'outbox_tx_idx'"))
          .isEqualTo(1);
    }
  }

  @Test
  void partialIndexesHaveTheClaimPredicates() throws SQLException {
    migrate(OutboxTables.of("outbox"));

    try (Connection c = db.connect()) {
      assertThat(Catalog.indexes(c, "public"))
          .contains(
              "outbox_pending_idx: CREATE INDEX outbox_pending_idx ON public.outbox"
                  + " USING btree (id) WHERE (published_at IS NULL)",
              "outbox_retrying_idx: CREATE INDEX outbox_retrying_idx ON public.outbox"
                  + " USING btree (aggregate_type, aggregate_id, id)"
                  + " WHERE ((published_at IS NULL) AND (next_attempt_at IS NOT NULL))",
              "outbox_event_id_key: CREATE UNIQUE INDEX outbox_event_id_key ON public.outbox"
                  + " USING btree (event_id)",
              "outbox_published_idx: CREATE INDEX outbox_published_idx ON public.outbox"
                  + " USING btree (published_at) WHERE (published_at IS NOT NULL)",
              "outbox_dead_letter_event_id_idx: CREATE INDEX outbox_dead_letter_event_id_idx"
                  + " ON public.outbox_dead_letter USING btree (event_id)");
    }
  }

  /** Debezium's outbox layout, read through columns.*. */
  static final OutboxColumns DEBEZIUM = OutboxColumns.DEBEZIUM;

  @Test
  void addsTheRelaysColumnsBesideATableInDebeziumsLayoutKeepingItsNames() throws SQLException {
    try (Connection c = db.connect();
        var s = c.createStatement()) {
      s.execute(
          "CREATE TABLE outbox (id uuid NOT NULL PRIMARY KEY, aggregatetype varchar(255) NOT NULL,"
              + " aggregateid varchar(255) NOT NULL, type varchar(255) NOT NULL, payload jsonb)");
      s.execute(
          "INSERT INTO outbox VALUES (gen_random_uuid(), 'order', '1', 'Created', '{}'),"
              + " (gen_random_uuid(), 'order', '2', 'Created', '{}')");
    }
    OutboxTables tables = OutboxTables.of("outbox").withColumns(DEBEZIUM);

    migrate(tables);
    List<String> after;
    try (Connection c = db.connect()) {
      after = Catalog.snapshot(c);
    }
    assertThat(migrate(tables).applied()).isZero();

    try (Connection c = db.connect()) {
      assertThat(Catalog.snapshot(c)).isEqualTo(after);
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute"
                      + " WHERE attrelid = 'public.outbox'::regclass AND attnum > 0"
                      + " AND NOT attisdropped ORDER BY attnum"))
          .containsExactly(
              "id uuid",
              "aggregatetype character varying(255)",
              "aggregateid character varying(255)",
              "type character varying(255)",
              "payload jsonb",
              "relay_id bigint",
              "destination text",
              "headers jsonb",
              "created_at timestamp with time zone",
              "available_at timestamp with time zone",
              "published_at timestamp with time zone",
              "attempts integer",
              "next_attempt_at timestamp with time zone",
              "last_error text",
              "tx xid8");
      // The existing rows are numbered, in the relay's order.
      assertThat(Catalog.count(c, "SELECT count(DISTINCT relay_id) FROM outbox")).isEqualTo(2);
      assertThat(Catalog.indexes(c, "public"))
          .contains(
              "outbox_pending_idx: CREATE INDEX outbox_pending_idx ON public.outbox"
                  + " USING btree (relay_id) WHERE (published_at IS NULL)",
              "outbox_retrying_idx: CREATE INDEX outbox_retrying_idx ON public.outbox"
                  + " USING btree (aggregatetype, aggregateid, relay_id)"
                  + " WHERE ((published_at IS NULL) AND (next_attempt_at IS NOT NULL))");
      assertThat(Catalog.tables(c)).contains("public.outbox_dead_letter");
    }
  }

  @Test
  void createsAMappedTableUnderItsOwnNamesWhenThereIsNone() throws SQLException {
    migrate(OutboxTables.of("outbox").withColumns(DEBEZIUM));

    try (Connection c = db.connect()) {
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT attname FROM pg_attribute WHERE attrelid = 'public.outbox'::regclass"
                      + " AND attnum > 0 AND NOT attisdropped ORDER BY attnum"))
          .startsWith("relay_id", "id", "aggregatetype", "aggregateid", "type");
    }
  }

  @Test
  void aMappedColumnTheTableLacksFailsNamingTheKey() throws SQLException {
    try (Connection c = db.connect();
        var s = c.createStatement()) {
      s.execute("CREATE TABLE outbox (id uuid PRIMARY KEY, aggregatetype text, type text)");
    }

    assertThatThrownBy(() -> migrate(OutboxTables.of("outbox").withColumns(DEBEZIUM)))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining(
            "columns.aggregate-id = aggregateid: table public.outbox has no such column");
    try (Connection c = db.connect()) { // nothing changed
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT attname FROM pg_attribute WHERE attrelid = 'public.outbox'::regclass"
                      + " AND attnum > 0 AND NOT attisdropped ORDER BY attnum"))
          .containsExactly("id", "aggregatetype", "type");
    }
  }

  @Test
  void theOutboxGetsQueueTableAutovacuumSettings() throws SQLException {
    migrate(OutboxTables.of("billing.outbox"));

    try (Connection c = db.connect()) {
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT unnest(reloptions) FROM pg_class"
                      + " WHERE oid = 'billing.outbox'::regclass ORDER BY 1"))
          .containsExactly(
              "autovacuum_analyze_scale_factor=0.01",
              "autovacuum_analyze_threshold=1000",
              "autovacuum_vacuum_insert_scale_factor=0.01",
              "autovacuum_vacuum_insert_threshold=1000",
              "autovacuum_vacuum_scale_factor=0.01",
              "autovacuum_vacuum_threshold=1000");
    }
  }

  @Test
  void printedScriptBuildsWhatMigrateBuilds() throws SQLException {
    OutboxTables tables = OutboxTables.of("Billing.outbox", "archive.outbox_dead");
    migrate(tables);
    String script = new Migrator(tables).script();

    try (TestDatabase other = TestDatabase.create("schema_script");
        Connection migrated = db.connect();
        Connection scripted = other.connect()) {
      scripted.setAutoCommit(false);
      try (Statement statement = scripted.createStatement()) {
        statement.execute(script);
        statement.execute(script); // idempotent, as the script says
      }
      scripted.commit();
      assertThat(schemaOf(scripted)).isNotEmpty().isEqualTo(schemaOf(migrated));
    }
  }

  /** The catalog snapshot and the tables' options, without Flyway's history table. */
  private static List<String> schemaOf(Connection c) throws SQLException {
    List<String> schema = new java.util.ArrayList<>(Catalog.snapshot(c));
    schema.removeIf(line -> line.contains("relay_schema_history"));
    schema.addAll(
        Catalog.strings(
            c,
            "SELECT c.oid::regclass || ' ' || coalesce(c.reloptions::text, '') FROM pg_class c"
                + " JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')"
                + " AND c.relname NOT LIKE '%relay_schema_history%' ORDER BY 1"));
    return schema;
  }

  @Test
  void severalOutboxesInOneDatabaseMigrateIndependently() throws SQLException {
    OutboxTables orders = OutboxTables.of("orders_outbox");
    OutboxTables payments = OutboxTables.of("payments_outbox");
    OutboxTables billing = OutboxTables.of("billing.events_outbox", "billing.events_dead");

    assertThat(migrate(orders).applied()).isEqualTo(8);
    assertThat(migrate(payments).applied()).isEqualTo(8);
    assertThat(migrate(billing).applied()).isEqualTo(8);
    assertThat(migrate(payments).applied()).isZero();

    try (Connection c = db.connect()) {
      assertThat(Catalog.tables(c))
          .containsExactly(
              "billing.events_dead",
              "billing.events_outbox",
              "billing.events_outbox_relay_leader",
              "billing.events_outbox_relay_ledger",
              "billing.events_outbox_relay_offsets",
              "billing.events_outbox_relay_position",
              "billing.events_outbox_relay_schema_history",
              "public.orders_outbox",
              "public.orders_outbox_dead_letter",
              "public.orders_outbox_relay_leader",
              "public.orders_outbox_relay_ledger",
              "public.orders_outbox_relay_offsets",
              "public.orders_outbox_relay_position",
              "public.orders_outbox_relay_schema_history",
              "public.payments_outbox",
              "public.payments_outbox_dead_letter",
              "public.payments_outbox_relay_leader",
              "public.payments_outbox_relay_ledger",
              "public.payments_outbox_relay_offsets",
              "public.payments_outbox_relay_position",
              "public.payments_outbox_relay_schema_history");
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT tgrelid::regclass || ' ' || tgname FROM pg_trigger"
                      + " WHERE NOT tgisinternal ORDER BY 1"))
          .containsExactly(
              "billing.events_outbox outbox_relay_notify",
              "orders_outbox outbox_relay_notify",
              "payments_outbox outbox_relay_notify");
    }
  }

  @Test
  void leavesTheApplicationsOwnFlywayHistoryAlone() throws SQLException {
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setUrl(db.url());
    dataSource.setUser(db.user());
    dataSource.setPassword(db.password());
    Flyway app =
        Flyway.configure().dataSource(dataSource).locations("classpath:db/app/migration").load();
    assertThat(app.migrate().migrationsExecuted).isEqualTo(1);

    // The application's schema is not empty, and has a history table of its own.
    MigrationResult relay = new Migrator(OutboxTables.of("outbox")).migrate(dataSource);

    assertThat(relay.applied()).isEqualTo(8);
    assertThat(app.migrate().migrationsExecuted).isZero();
    app.validate();
    try (Connection c = db.connect()) {
      assertThat(
              Catalog.strings(
                  c, "SELECT version || ' ' || script FROM public.flyway_schema_history"))
          .containsExactly("1 V1__app_orders.sql");
      assertThat(
              Catalog.strings(
                  c,
                  "SELECT coalesce(version, '-') || ' ' || type || ' ' || success"
                      + " FROM public.outbox_relay_schema_history ORDER BY installed_rank"))
          .containsExactly(
              "0 BASELINE true",
              "1 SQL true",
              "2 SQL true",
              "3 SQL true",
              "4 SQL true",
              "5 SQL true",
              "6 SQL true",
              "7 SQL true",
              "8 SQL true");
      assertThat(Catalog.tables(c)).contains("public.orders", "public.outbox");
    }
  }

  @Test
  void keepsMixedCaseNamesAndLongNamesWithinTheIdentifierLimit() throws SQLException {
    String table =
        ("order_events_of_the_billing_department_kept_for_auditing" + "_".repeat(20))
            .substring(0, 63);
    OutboxTables mixed = OutboxTables.of("Billing.OrderEvents", "Billing.OrderEvents_Dead");
    OutboxTables longOne = OutboxTables.of("billing." + table);

    assertThat(migrate(mixed).applied()).isEqualTo(8);
    assertThat(migrate(longOne).applied()).isEqualTo(8);
    assertThat(migrate(longOne).applied()).isZero();

    try (Connection c = db.connect()) {
      assertThat(Catalog.tables(c))
          .contains(
              "Billing.OrderEvents",
              "Billing.OrderEvents_Dead",
              "Billing.OrderEvents_relay_schema_history",
              "billing." + table,
              "billing." + longOne.deadLetterTable(),
              "billing." + longOne.historyTable());
      assertThat(Catalog.indexes(c, "billing"))
          .anyMatch(
              line -> line.contains("_pending_idx: ") && line.contains("(published_at IS NULL)"))
          .allMatch(line -> line.indexOf(':') <= 63);
      assertThat(Catalog.indexes(c, "Billing"))
          .contains(
              "OrderEvents_pending_idx: CREATE INDEX \"OrderEvents_pending_idx\""
                  + " ON \"Billing\".\"OrderEvents\" USING btree (id) WHERE (published_at IS NULL)");
    }
  }

  @Test
  void failureNamesTheTableAndTheDatabaseErrorOnOneLine() throws SQLException {
    try (Connection c = db.connect();
        Statement statement = c.createStatement()) {
      // An application table of the same name with another layout.
      statement.execute("CREATE TABLE public.outbox (id bigint PRIMARY KEY, body text)");
    }

    assertThatThrownBy(() -> migrate(OutboxTables.of("outbox")))
        .isInstanceOf(MigrationException.class)
        .hasMessageStartingWith("Migrating the outbox table public.outbox failed: ")
        .hasMessageContaining("V1__outbox_tables.sql")
        .hasMessageContaining("does not exist")
        .hasMessageContaining("[SQL state 42703]")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    try (Connection c = db.connect()) {
      // The failed migration rolled back whole: no index, no dead-letter table.
      assertThat(Catalog.tables(c)).doesNotContain("public.outbox_dead_letter");
    }
  }

  @Test
  void unreachableDatabaseFailsWithoutShowingThePassword() {
    Migrator migrator = new Migrator(OutboxTables.of("billing.outbox"));

    assertThatThrownBy(
            () ->
                migrator.migrate(
                    "jdbc:postgresql://127.0.0.1:1/app?password=urlSecret", "app", "s3cret!"))
        .isInstanceOf(MigrationException.class)
        .hasMessageStartingWith("Migrating the outbox table billing.outbox failed: ")
        .hasMessageContaining("127.0.0.1:1")
        .satisfies(
            e ->
                assertThat(e.getMessage())
                    .doesNotContain("s3cret!")
                    .doesNotContain("urlSecret")
                    .doesNotContain("\n"));
    assertThatThrownBy(() -> migrator.migrate("jdbc:mysql://h/db?password=urlSecret", "a", "b"))
        .isInstanceOf(MigrationException.class)
        .hasMessageContaining("jdbc:mysql://h/db?password=******")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("urlSecret"));
  }
}
