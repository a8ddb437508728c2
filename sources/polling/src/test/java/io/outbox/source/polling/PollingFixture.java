package io.outbox.source.polling;

import com.typesafe.config.Config;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.DatabaseSettings.Retention;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.Ticker;
import io.outbox.schema.PartitionedLayout;
import io.outbox.testkit.SourceSettings;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/** One test's database, its sources, and SQL shortcuts to write and inspect outbox rows. */
final class PollingFixture implements AutoCloseable {

  static final String PIPELINE = "orders";
  static final String PATH = "outbox-relay.pipelines.orders.source.polling";

  final TestDb db;
  private final DatabaseSettings.Partitions layout;
  private final Connection sql;
  private final List<PollingSource> sources = new CopyOnWriteArrayList<>();

  private PollingFixture(TestDb db, PartitionedLayout layout) throws SQLException {
    this.db = db;
    this.layout =
        layout == null
            ? DatabaseSettings.Partitions.PLAIN
            : new DatabaseSettings.Partitions(layout.count(), layout.size());
    this.sql = db.connect();
  }

  static PollingFixture create(String purpose) throws SQLException {
    return new PollingFixture(TestDb.create(purpose), null);
  }

  /** A fixture whose outbox has what settlement by position needs (the index on tx). */
  static PollingFixture createByPosition(String purpose) throws SQLException {
    return new PollingFixture(TestDb.create(purpose, null, true), null);
  }

  /**
   * A fixture whose outbox is partitioned into 3 partitions of 1,000 ids, the next id 991, so that
   * a test's rows cross from the first partition into the second; with {@code byPosition}, with
   * what settlement by position needs.
   */
  static PollingFixture createAcrossPartitions(String purpose, boolean byPosition)
      throws SQLException {
    PartitionedLayout layout = new PartitionedLayout(3, 1000);
    PollingFixture fx = new PollingFixture(TestDb.create(purpose, layout, byPosition), layout);
    try (Connection c = fx.db.connect()) {
      c.createStatement().execute("SELECT setval('outbox_id_seq', 990)");
    }
    return fx;
  }

  /** A fixture whose outbox is partitioned so. */
  static PollingFixture create(String purpose, PartitionedLayout layout) throws SQLException {
    return new PollingFixture(TestDb.create(purpose, layout), layout);
  }

  /** Test settings: fast intervals, then {@code overrides}, then reference.conf. */
  static Config settings(Map<String, ?> overrides) {
    return SourceSettings.of(
        "polling",
        Map.of(
            "poll-interval", "200ms",
            "standby-check-interval", "200ms",
            "leadership-check-interval", "200ms"),
        overrides);
  }

  static PluginContext context(Config settings, int lanes, List<Role> roles) {
    return new PluginContext(
        PIPELINE, settings, PATH, lanes, 100, Clock.systemUTC(), Ticker.SYSTEM, roles::add);
  }

  PollingSource source(int lanes) {
    return source(lanes, OnPublish.MARK, Map.of(), new CopyOnWriteArrayList<>());
  }

  PollingSource source(int lanes, OnPublish onPublish, Map<String, ?> overrides, List<Role> roles) {
    return source(lanes, onPublish, overrides, roles, Retention.OFF);
  }

  PollingSource source(
      int lanes,
      OnPublish onPublish,
      Map<String, ?> overrides,
      List<Role> roles,
      Retention retention) {
    return source(lanes, onPublish, overrides, roles, retention, Map.of());
  }

  /** A source of a table whose event columns are named {@code columns} ({@code columns.*}). */
  PollingSource source(
      int lanes,
      OnPublish onPublish,
      Map<String, ?> overrides,
      List<Role> roles,
      Retention retention,
      Map<String, String> columns) {
    DatabaseSettings database =
        new DatabaseSettings(
            db.url(),
            TestDb.USER,
            TestDb.PASSWORD,
            Map.of(),
            "outbox",
            "outbox_dead_letter",
            onPublish,
            PIPELINE,
            retention,
            columns,
            layout);
    PollingSource source =
        (PollingSource)
            new PollingSourceProvider()
                .create(context(settings(overrides), lanes, roles), database);
    sources.add(source);
    return source;
  }

  /** An active source. */
  PollingSource activeSource(int lanes, OnPublish onPublish) throws InterruptedException {
    PollingSource source = source(lanes, onPublish, Map.of(), new CopyOnWriteArrayList<>());
    source.activate();
    return source;
  }

  long insert(String type, String id) throws SQLException {
    return insert(sql, type, id, "{\"n\": 1}", "{}", 0);
  }

  /** Inserts one row on {@code connection} (in its transaction, if any). */
  static long insert(
      Connection connection,
      String type,
      String id,
      String payload,
      String headers,
      long availableInMillis)
      throws SQLException {
    try (PreparedStatement ps =
        connection.prepareStatement(
            "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers,"
                + " available_at) VALUES (?, ?, 'Created', ?::jsonb, ?::jsonb,"
                + " now() + ? * interval '1 millisecond') RETURNING id")) {
      ps.setString(1, type);
      ps.setString(2, id);
      ps.setString(3, payload);
      ps.setString(4, headers);
      ps.setLong(5, availableInMillis);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  Connection sql() {
    return sql;
  }

  /** The first column of every row. */
  List<Object> column(String query, Object... params) throws SQLException {
    List<Object> values = new ArrayList<>();
    for (Map<String, Object> row : rows(query, params)) {
      values.add(row.values().iterator().next());
    }
    return values;
  }

  Object value(String query, Object... params) throws SQLException {
    List<Object> values = column(query, params);
    return values.isEmpty() ? null : values.get(0);
  }

  List<Map<String, Object>> rows(String query, Object... params) throws SQLException {
    try (PreparedStatement ps = sql.prepareStatement(query)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      List<Map<String, Object>> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        ResultSetMetaData meta = rs.getMetaData();
        while (rs.next()) {
          Map<String, Object> row = new java.util.LinkedHashMap<>();
          for (int c = 1; c <= meta.getColumnCount(); c++) {
            row.put(meta.getColumnLabel(c), rs.getObject(c));
          }
          rows.add(row);
        }
      }
      return rows;
    }
  }

  void execute(String statement) throws SQLException {
    try (var s = sql.createStatement()) {
      s.execute(statement);
    }
  }

  /**
   * Ends the sessions of this test's database whose application name ends with {@code role} ({@code
   * leader}, {@code listener}, {@code claims}) and that are in {@code state} (any when null).
   *
   * @return how many were ended
   */
  int terminate(String role, String state) throws SQLException {
    List<Object> ended =
        column(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                + " WHERE datname = current_database() AND application_name = ?"
                + " AND (?::text IS NULL OR state = ?::text)",
            "outbox-relay " + PIPELINE + " " + role,
            state,
            state);
    return ended.size();
  }

  /** Ends the session holding a leader lock (a session-level advisory lock) in this database. */
  int terminateLeader() throws SQLException {
    return column(
            "SELECT pg_terminate_backend(l.pid) FROM pg_locks l"
                + " JOIN pg_database d ON d.oid = l.database AND d.datname = current_database()"
                + " WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted")
        .size();
  }

  static List<Long> ids(Claim claim) {
    return claim.events().stream().map(OutboxEvent::id).toList();
  }

  @Override
  public void close() throws SQLException {
    for (PollingSource source : sources) {
      source.close(Duration.ofSeconds(5));
    }
    sql.close();
    db.close();
  }
}
