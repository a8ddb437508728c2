package io.outbox.source.cdc;

import static org.awaitility.Awaitility.await;

import com.typesafe.config.Config;
import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxTables;
import io.outbox.client.OutboxWriter;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.PluginContext.Role;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Ticker;
import io.outbox.schema.Migrator;
import io.outbox.schema.PartitionedLayout;
import io.outbox.testkit.SourceSettings;
import io.outbox.testkit.Sql;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One test's database with a migrated outbox, the CDC sources made on it, and SQL shortcuts.
 * Closing it closes the sources and drops the database with its replication slots. Public for the
 * integration tests of the source's sub-packages.
 */
public final class CdcFixture implements AutoCloseable {

  public static final String PIPELINE = "orders";

  /** Leadership settings short enough for take-over tests: a 3 s lease, renewed every 500 ms. */
  static final Map<String, String> LEASE =
      Map.of("lease-timeout", "3s", "leadership-check-interval", "500ms");

  static final String PATH = "outbox-relay.pipelines.orders.source.cdc";

  public final TestDatabase db;
  final OutboxWriter writer = OutboxWriter.forTable("outbox");
  private final List<CdcSource> sources = new CopyOnWriteArrayList<>();

  public CdcFixture(String purpose) {
    this(purpose, null);
  }

  /** A fixture whose outbox is in {@code layout} (null: plain). */
  public CdcFixture(String purpose, PartitionedLayout layout) {
    db = TestDatabase.create(purpose);
    new Migrator(OutboxTables.of("outbox", "outbox_dead_letter"), layout)
        .migrate(db.url(), db.user(), db.password());
  }

  /** Test settings: fast intervals, then {@code overrides}, then reference.conf. */
  static Config settings(Map<String, ?> overrides) {
    return SourceSettings.of(
        "cdc",
        Map.of(
            "heartbeat-interval", "200ms",
            "offset-commit-interval", "100ms",
            "standby-check-interval", "200ms",
            "reconcile-interval", "300ms"),
        overrides);
  }

  CdcSource source(int lanes, Map<String, ?> overrides, List<Role> roles) {
    return source(lanes, OnPublish.MARK, overrides, roles);
  }

  /** A source whose relay clock is {@code clock} (a skewed host clock). */
  CdcSource source(Map<String, ?> overrides, Clock clock) {
    return source(
        db.url(),
        db.user(),
        db.password(),
        1,
        OnPublish.MARK,
        overrides,
        new CopyOnWriteArrayList<>(),
        DatabaseSettings.Retention.OFF,
        clock,
        Map.of());
  }

  CdcSource source(int lanes, OnPublish onPublish, Map<String, ?> overrides, List<Role> roles) {
    return source(lanes, onPublish, overrides, roles, DatabaseSettings.Retention.OFF);
  }

  CdcSource source(
      int lanes,
      OnPublish onPublish,
      Map<String, ?> overrides,
      List<Role> roles,
      DatabaseSettings.Retention retention) {
    return source(
        db.url(),
        db.user(),
        db.password(),
        lanes,
        onPublish,
        overrides,
        roles,
        retention,
        Clock.systemUTC(),
        Map.of());
  }

  /** A source of this fixture's pipeline on another database or as another user. */
  CdcSource source(String url, String user, String password, Map<String, ?> overrides) {
    return source(
        url,
        user,
        password,
        1,
        OnPublish.MARK,
        overrides,
        new CopyOnWriteArrayList<>(),
        DatabaseSettings.Retention.OFF,
        Clock.systemUTC(),
        Map.of());
  }

  /** A source that reads the table's columns under the names {@code columns} (columns.*) gives. */
  CdcSource sourceWithColumns(Map<String, String> columns) {
    return source(
        db.url(),
        db.user(),
        db.password(),
        1,
        OnPublish.MARK,
        Map.of(),
        new CopyOnWriteArrayList<>(),
        DatabaseSettings.Retention.OFF,
        Clock.systemUTC(),
        columns);
  }

  private CdcSource source(
      String url,
      String user,
      String password,
      int lanes,
      OnPublish onPublish,
      Map<String, ?> overrides,
      List<Role> roles,
      DatabaseSettings.Retention retention,
      Clock clock,
      Map<String, String> columns) {
    DatabaseSettings database =
        new DatabaseSettings(
            url,
            user,
            password,
            Map.of(),
            "outbox",
            "outbox_dead_letter",
            onPublish,
            PIPELINE,
            retention,
            columns);
    PluginContext context =
        new PluginContext(
            PIPELINE, settings(overrides), PATH, lanes, 100, clock, Ticker.SYSTEM, roles::add);
    CdcSource source = (CdcSource) new CdcSourceProvider().create(context, database);
    sources.add(source);
    return source;
  }

  /** What {@code status} reads of this fixture's pipeline: its leader and connected instances. */
  OutboxStatus.Instances instances() throws SQLException {
    try (Connection c = db.connect()) {
      return new OutboxStatus(OutboxTables.of("outbox", "outbox_dead_letter"))
          .instances(c, PIPELINE);
    }
  }

  /** The slot name the sources of this fixture use by default. */
  public String slot() {
    return CdcSettings.derivedName(db.name(), PIPELINE);
  }

  List<UUID> commit(List<OutboxMessage> messages) throws SQLException {
    return Sql.inTransaction(db::connect, c -> writer.writeAll(c, messages));
  }

  static OutboxMessage event(String aggregateId, int seq) {
    return OutboxMessage.builder()
        .aggregate("order", aggregateId)
        .eventType("OrderUpdated")
        .payload("{\"seq\": " + seq + "}")
        .header("seq", Integer.toString(seq))
        .build();
  }

  /**
   * Waits until {@code wanted} events are in the source's memory, then claims each lane once: one
   * claim per lane holding all of that lane's events.
   */
  static List<Claim> claimAll(CdcSource source, int lanes, int wanted, Duration timeout)
      throws InterruptedException {
    await().atMost(timeout).until(() -> source.inMemory() >= wanted);
    List<Claim> claims = new ArrayList<>();
    for (int lane = 0; lane < lanes; lane++) {
      Claim c = source.claim(lane, 1000, Duration.ofMillis(100));
      if (c.events().isEmpty()) {
        c.release();
      } else {
        claims.add(c);
      }
    }
    return claims;
  }

  static void publishAll(Claim claim) {
    List<Settlement> s = new ArrayList<>();
    for (OutboxEvent e : claim.events()) {
      s.add(new Settlement.Published(e));
    }
    claim.settle(s);
  }

  public long count(String sql) throws SQLException {
    return Sql.number(db::connect, sql);
  }

  /** The slot's confirmed flush position in bytes, or -1 without a slot. */
  long confirmedLsn() throws SQLException {
    return count(
        "SELECT coalesce((SELECT pg_wal_lsn_diff(confirmed_flush_lsn, '0/0')::bigint"
            + " FROM pg_replication_slots WHERE slot_name = '"
            + slot()
            + "'), -1)");
  }

  /** The pid of the session streaming this fixture's slot, 0 when none. */
  public long walsender() throws SQLException {
    return count(
        "SELECT coalesce((SELECT active_pid FROM pg_replication_slots WHERE slot_name = '"
            + slot()
            + "' AND active), 0)");
  }

  /** The backend holding the wake gate {@code (key, 1)} exclusively, 0 when none does. */
  public long wakeGateHolder() throws SQLException {
    long key = OutboxTables.of("outbox").wakeLockKey() & 0xffff_ffffL;
    return count(
        "SELECT coalesce(max(pid), 0) FROM pg_locks WHERE locktype = 'advisory' AND granted"
            + " AND mode = 'ExclusiveLock' AND objsubid = 2 AND objid = 1"
            + " AND classid = "
            + key
            + "::bigint::oid"
            + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())");
  }

  public void execute(String sql) throws SQLException {
    Sql.execute(db::connect, sql);
  }

  @Override
  public void close() {
    for (CdcSource s : sources) {
      s.close(Duration.ofSeconds(10));
    }
    db.close();
  }
}
