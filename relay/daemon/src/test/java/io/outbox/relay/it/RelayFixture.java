package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.typesafe.config.ConfigFactory;
import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxTables;
import io.outbox.client.OutboxWriter;
import io.outbox.relay.Relay;
import io.outbox.relay.config.RelayConfigLoader;
import io.outbox.relay.config.RelaySettings;
import io.outbox.schema.Migrator;
import io.outbox.schema.PartitionedLayout;
import io.outbox.source.postgres.LanePositions;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivatePostgres;
import io.outbox.testkit.Services;
import io.outbox.testkit.Sql;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * One end-to-end test's world: its own database with a migrated outbox (on the shared PostgreSQL,
 * or on a {@link PrivatePostgres} of the test's), its own topic prefix, and the relay configuration
 * pointing at both.
 */
final class RelayFixture implements AutoCloseable {
  /** What a relay of the fixture's pipeline ({@code it}) logs when it becomes the active one. */
  static final String ACTIVE = "pipeline it: active, ";

  /** What a polling relay of the pipeline logs while another instance is the active one. */
  static final String STANDING_BY = "pipeline it: another instance is active for";

  /** The test's database on the shared PostgreSQL; {@code null} on a private cluster. */
  final TestDatabase db;

  final String topicPrefix;
  final OutboxWriter writer = OutboxWriter.forTable("outbox");
  private final String url;
  private final String user;
  private final String password;
  private final String slot;
  private final Database connector;

  /** Opens a session of the fixture's database. */
  @FunctionalInterface
  interface Database {
    Connection connect() throws SQLException;
  }

  RelayFixture(String name) {
    this(TestDatabase.create(name), name);
  }

  private RelayFixture(TestDatabase db, String name) {
    this(db, name, db.url(), db.user(), db.password(), db.name(), db::connect, true);
  }

  /** A fixture whose database has no tables yet: the test creates them its own way. */
  static RelayFixture unmigrated(String name) {
    TestDatabase db = TestDatabase.create(name);
    return new RelayFixture(
        db, name, db.url(), db.user(), db.password(), db.name(), db::connect, false);
  }

  private RelayFixture(
      TestDatabase db,
      String name,
      String url,
      String user,
      String password,
      String slot,
      Database connector,
      boolean migrate) {
    this.db = db;
    this.topicPrefix = KafkaTestSupport.uniqueTopic(name);
    this.url = url;
    this.user = user;
    this.password = password;
    this.slot = slot;
    this.connector = connector;
    if (migrate) {
      new Migrator(OutboxTables.of("outbox", "outbox_dead_letter")).migrate(url, user, password);
    }
  }

  /**
   * A fixture whose outbox has what settlement by position needs (migrate's index on tx); the
   * test's config says {@code on-publish = position}.
   */
  static RelayFixture byPosition(String name) {
    TestDatabase db = TestDatabase.create(name);
    new Migrator(OutboxTables.of("outbox", "outbox_dead_letter"), null, true)
        .migrate(db.url(), db.user(), db.password());
    return new RelayFixture(
        db, name, db.url(), db.user(), db.password(), db.name(), db::connect, false);
  }

  /**
   * A fixture whose outbox is partitioned in {@code layout}; the test's config says {@code layout =
   * partitioned}.
   */
  static RelayFixture partitioned(String name, PartitionedLayout layout) {
    TestDatabase db = TestDatabase.create(name);
    new Migrator(OutboxTables.of("outbox", "outbox_dead_letter"), layout)
        .migrate(db.url(), db.user(), db.password());
    return new RelayFixture(
        db, name, db.url(), db.user(), db.password(), db.name(), db::connect, false);
  }

  /**
   * A fixture on database {@code postgres} of a private cluster, as its superuser; the CDC slot is
   * named {@code name}.
   */
  static RelayFixture onPrivate(PrivatePostgres pg, String adminPassword, String name) {
    return new RelayFixture(
        null,
        name,
        pg.url("postgres"),
        PrivatePostgres.ADMIN,
        adminPassword,
        name,
        () -> pg.connectAsAdmin("postgres"),
        true);
  }

  /** A new session of the fixture's database. */
  Connection connect() throws SQLException {
    return connector.connect();
  }

  /** The topic events of {@code aggregateType} are routed to. */
  String topic(String aggregateType) {
    return topicPrefix + "." + aggregateType;
  }

  /**
   * HOCON for {@code sink.kafka.delivery = exactly-once} with this test's own ledger topic and
   * transactional ids, to merge into the pipeline.
   */
  String exactlyOnce() {
    return "sink.kafka.delivery = exactly-once, sink.kafka.ledger.topic = \""
        + topic("ledger")
        + "\", sink.kafka.transactional-id-prefix = \""
        + topic("tx")
        + "\"\n";
  }

  /** HOCON for one pipeline named {@code it}; {@code extra} is merged into the pipeline. */
  String config(String extra) {
    return config(extra, Services.kafkaBootstrap());
  }

  String config(String extra, String bootstrap) {
    return config(extra, bootstrap, url);
  }

  /** HOCON for pipeline {@code it} that reaches this test's database at {@code databaseUrl}. */
  String config(String extra, String bootstrap, String databaseUrl) {
    return configWithSink(
        databaseUrl,
        "type = kafka, kafka { bootstrap-servers = \"%s\", send-timeout = 5s }"
            .formatted(bootstrap),
        extra);
  }

  /**
   * HOCON for one pipeline named {@code it} with the polling source, fast test intervals, the sink
   * {@code sink} (the inside of {@code sink { }}), events routed to {@code <topicPrefix>.<aggregate
   * type>}; {@code extra} is merged into the pipeline.
   */
  String configWithSink(String databaseUrl, String sink, String extra) {
    return """
        outbox-relay {
          http.port = 0
          shutdown-timeout = 15s
          pipelines.it {
            database { url = "%s", user = "%s", password = "%s" }
            source { type = polling, polling { poll-interval = 250ms, standby-check-interval = 250ms, leadership-check-interval = 250ms } }
            sink { %s,
                   reconnect-backoff { initial = 200ms, max = 1s } }
            routing.destination = "%s.${aggregate_type}"
            retry { max-attempts = 3, initial-backoff = 300ms, max-backoff = 2s, jitter = 0 }
            %s
          }
        }
        """
        .formatted(databaseUrl, user, password, sink, topicPrefix, extra);
  }

  /**
   * HOCON that switches the pipeline to the CDC source, on a slot named after this test's database
   * (slots are cluster-wide), with fast test intervals; {@code cdcExtra} goes into {@code
   * source.cdc}.
   */
  String cdc(String cdcExtra) {
    return """
        source { type = cdc, cdc { slot-name = "%s", heartbeat-interval = 200ms,
                 offset-commit-interval = 100ms, standby-check-interval = 250ms,
                 reconcile-interval = 500ms, %s } }
        """
        .formatted(slot, cdcExtra);
  }

  /** The confirmed position of this test's CDC slot, in bytes; -1 when it does not exist. */
  long slotConfirmedLsn() throws SQLException {
    return count(
        "SELECT coalesce((SELECT pg_wal_lsn_diff(confirmed_flush_lsn, '0/0')::bigint"
            + " FROM pg_replication_slots WHERE slot_name = '"
            + slot
            + "'), -1)");
  }

  RelaySettings settings(String extra) {
    return settingsOf(config(extra));
  }

  /** The settings of the relay configuration {@code hocon}, with the standard loader. */
  static RelaySettings settingsOf(String hocon) {
    return RelayConfigLoader.standard().load(ConfigFactory.parseString(hocon), "test").settings();
  }

  /** Starts an in-process relay with the configuration {@code hocon}. */
  static Relay startWith(String hocon) {
    return Relay.start(settingsOf(hocon));
  }

  Relay start(String extra) {
    return Relay.start(settings(extra));
  }

  /** Writes events in one committed transaction; returns their ids. */
  List<UUID> commit(List<OutboxMessage> messages) throws SQLException {
    return Sql.inTransaction(this::connect, c -> writer.writeAll(c, messages));
  }

  static OutboxMessage event(String aggregateId, int seq) {
    return OutboxMessage.builder()
        .aggregate("order", aggregateId)
        .eventType("OrderUpdated")
        .payload("{\"seq\":" + seq + "}")
        .header("seq", Integer.toString(seq))
        .build();
  }

  /**
   * An event of aggregate type {@code order} routed to {@code not a valid topic!}: a name Kafka
   * refuses, so the sink fails it permanently on the first attempt.
   */
  static OutboxMessage misrouted(String aggregateId) {
    return OutboxMessage.builder()
        .aggregate("order", aggregateId)
        .eventType("Misrouted")
        .destination("not a valid topic!")
        .payload("{}")
        .build();
  }

  /**
   * Creates the one-partition topic {@code <topicPrefix>.stuck} that refuses every record while
   * {@code message.timestamp.before.max.ms = 0} (each record's timestamp is "too old" by the time
   * the broker sees it): INVALID_TIMESTAMP, a per-record error the sink counts as retryable.
   * Returns its name; {@link #unstick} lets records in again.
   */
  String stuckTopic() {
    String stuck = topicPrefix + ".stuck";
    KafkaTestSupport.createTopic(stuck, 1, Map.of(BEFORE_MAX_MS, "0"));
    return stuck;
  }

  /** Lets the topic of {@link #stuckTopic} accept records of any age again. */
  static void unstick(String stuck) {
    KafkaTestSupport.setTopicConfig(stuck, BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));
  }

  private static final String BEFORE_MAX_MS = "message.timestamp.before.max.ms";

  /**
   * Waits up to 60 s, looking every 20 ms, until at least {@code n} events are published: to kill a
   * relay in the middle of a backlog.
   */
  void awaitPublishedMidway(long n) {
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> published() >= n);
  }

  /**
   * Waits up to 30 s until {@code more} events beyond those {@code load} has committed by now are
   * published.
   */
  void awaitPublishedBeyond(OutboxLoad load, int more) {
    long committed = load.committedCount();
    await().atMost(Duration.ofSeconds(30)).until(() -> published() >= committed + more);
  }

  /** A row of {@code outbox_dead_letter}. */
  record DeadLetter(UUID eventId, String reason, int attempts, String lastError) {}

  /** The dead letter of the lowest id; fails when there is none. */
  DeadLetter firstDeadLetter() throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT event_id, reason, attempts, last_error FROM outbox_dead_letter"
                    + " ORDER BY id LIMIT 1")) {
      assertThat(rs.next()).as("a dead letter").isTrue();
      return new DeadLetter(
          rs.getObject("event_id", UUID.class),
          rs.getString("reason"),
          rs.getInt("attempts"),
          rs.getString("last_error"));
    }
  }

  long count(String sql) throws SQLException {
    return Sql.number(this::connect, sql);
  }

  /** The pipeline's pending rows as {@code status} counts them (settled by position or not). */
  long unpublished() throws SQLException {
    OutboxTables tables = OutboxTables.of("outbox", "outbox_dead_letter");
    try (Connection c = connect()) {
      return LanePositions.status(tables).backlog(c, "it").pending();
    }
  }

  /** The rows in the outbox that are not pending: marked, or settled by position. */
  long published() throws SQLException {
    return count("SELECT count(*) FROM outbox") - unpublished();
  }

  /** The first {@code published_at} after {@code t}, or {@code null} when none is yet. */
  java.time.Instant firstPublishedAfter(java.time.Instant t) throws SQLException {
    try (Connection c = connect();
        java.sql.PreparedStatement ps =
            c.prepareStatement("SELECT min(published_at) FROM outbox WHERE published_at > ?")) {
      ps.setTimestamp(1, java.sql.Timestamp.from(t));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        java.sql.Timestamp ts = rs.getTimestamp(1);
        return ts == null ? null : ts.toInstant();
      }
    }
  }

  List<ConsumerRecord<String, byte[]>> read(String topic, int expected, Duration timeout) {
    return KafkaTestSupport.readRecords(topic, expected, timeout);
  }

  /** Row id of each event id, to check order by id. */
  Map<UUID, Long> rowIds() throws SQLException {
    Map<UUID, Long> ids = new HashMap<>();
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT event_id, id FROM outbox UNION ALL SELECT event_id, id FROM"
                    + " outbox_dead_letter")) {
      while (rs.next()) {
        ids.put(rs.getObject(1, UUID.class), rs.getLong(2));
      }
    }
    return ids;
  }

  /**
   * Reads the topic of aggregate type {@code order} and asserts what a fault must not break: every
   * committed event delivered (duplicates identical), first deliveries in key order, no dead
   * letters, no attempts counted.
   */
  Deliveries assertDeliveredInKeyOrder(java.util.Collection<UUID> committed) throws SQLException {
    Deliveries deliveries = Deliveries.readAll(topic("order"));
    deliveries.assertEveryEventDeliveredAndDuplicatesIdentical(committed);
    assertFirstDeliveriesInKeyOrder(deliveries.records, rowIds());
    assertThat(count("SELECT count(*) FROM outbox_dead_letter")).as("dead letters").isZero();
    assertThat(count("SELECT count(*) FROM outbox WHERE attempts <> 0"))
        .as("rows with attempts")
        .isZero();
    return deliveries;
  }

  /**
   * Asserts that the FIRST delivery of each event, per key, follows row id order (duplicates may
   * repeat earlier events after a crash, but a first delivery never goes backwards).
   */
  static void assertFirstDeliveriesInKeyOrder(
      List<ConsumerRecord<String, byte[]>> records, Map<UUID, Long> rowIds) {
    Map<String, Long> lastByKey = new HashMap<>();
    java.util.Set<UUID> seen = new java.util.HashSet<>();
    List<String> violations = new ArrayList<>();
    for (ConsumerRecord<String, byte[]> r : records) {
      UUID id = UUID.fromString(KafkaTestSupport.header(r, "event-id"));
      if (!seen.add(id)) {
        continue;
      }
      long rowId = rowIds.get(id);
      Long previous = lastByKey.put(r.key(), rowId);
      if (previous != null && previous > rowId) {
        violations.add("key " + r.key() + ": row " + rowId + " after row " + previous);
      }
    }
    assertThat(violations).as("per-key order of first deliveries").isEmpty();
  }

  @Override
  public void close() {
    if (db != null) {
      db.close();
    }
  }
}
