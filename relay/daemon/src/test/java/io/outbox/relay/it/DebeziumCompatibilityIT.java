package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.debezium.transforms.outbox.EventRouter;
import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.relay.Relay;
import io.outbox.schema.Migrator;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.apache.kafka.connect.storage.StringConverter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A table in the layout of Debezium's outbox event router, published by the relay ({@code
 * columns.*}, {@code sink.kafka.headers = debezium}) and by Debezium's real {@link EventRouter} on
 * the same rows' change events (the embedded engine on pgoutput): the Kafka records are the same,
 * topic, key, value bytes and headers, compared under Kafka Connect's {@code StringConverter} for
 * key and value and its default {@code SimpleHeaderConverter} for headers, without the connector's
 * {@code __debezium.context.*} headers ({@code extended.headers.enabled = false}). The table is
 * made as Debezium's docs make it, then given the relay's columns with the DDL of
 * docs/coming-from-debezium.md.
 */
class DebeziumCompatibilityIT {

  /** The pipeline settings of docs/coming-from-debezium.md. */
  static final String COLUMNS =
      "table = \"dbz.outbox\", dead-letter-table = \"dbz.outbox_dead_letter\"\n"
          + "columns { id = relay_id, event-id = id, aggregate-type = aggregatetype,"
          + " aggregate-id = aggregateid, event-type = type }\n";

  static final OutboxTables TABLES =
      OutboxTables.of("dbz.outbox", "dbz.outbox_dead_letter").withColumns(OutboxColumns.DEBEZIUM);

  private static RelayFixture fx;
  private static String order;
  private static String customer;
  private static String created;
  private static String updated;

  /** The rows' change events as Debezium's PostgreSQL connector emits them, in commit order. */
  private static final List<SourceRecord> changes = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void captureTheRowsWithDebezium() throws Exception {
    fx = new RelayFixture("debezium_compat");
    // Aggregate types of this run only: the topics are outbox.event.<aggregate type>.
    String run = fx.topicPrefix.replaceAll("[^a-z0-9]", "");
    order = "order" + run;
    customer = "customer" + run;
    created = "Created" + run; // route.by.field = type routes by these
    updated = "Updated" + run;
    try (Connection c = fx.connect();
        Statement s = c.createStatement()) {
      // Debezium's outbox table, as its docs make it, in a schema of its own.
      s.execute("CREATE SCHEMA dbz");
      s.execute(
          "CREATE TABLE dbz.outbox (id uuid NOT NULL PRIMARY KEY,"
              + " aggregatetype varchar(255) NOT NULL, aggregateid varchar(255) NOT NULL,"
              + " type varchar(255) NOT NULL, payload jsonb)");
      s.execute("CREATE PUBLICATION dbz FOR TABLE dbz.outbox");
      s.execute(
          "SELECT pg_create_logical_replication_slot('" + fx.db.name() + "_dbz', 'pgoutput')");
    }
    insertRows();
    // migrate adds the relay's columns beside Debezium's, and its own tables.
    new Migrator(TABLES).migrate(fx.db.url(), fx.db.user(), fx.db.password());
    try (Connection c = fx.connect();
        Statement s = c.createStatement()) {
      // Debezium's payload may be NULL; a NULL payload is a defect to the relay, dead-lettered.
      s.execute("ALTER TABLE dbz.outbox_dead_letter ALTER COLUMN payload DROP NOT NULL");
    }
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try (DebeziumEngine<RecordChangeEvent<SourceRecord>> engine =
        DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
            .using(engineProperties())
            .notifying(e -> changes.add(e.record()))
            .build()) {
      executor.execute(engine);
      await().atMost(Duration.ofSeconds(60)).until(() -> changes.size() >= 12);
    } finally {
      executor.shutdownNow();
      executor.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  @AfterAll
  static void tearDown() {
    if (fx != null) {
      fx.close();
    }
  }

  /** A dozen rows: two aggregate types, two event types, four keys, JSON of several shapes. */
  private static void insertRows() throws Exception {
    String[] payloads = {
      "{\"orderId\": \"1\", \"total\": 12.50}",
      "{\"nested\": {\"a\": [1, 2, {\"b\": null}]}, \"flag\": true}",
      "{\"text\": \"héllo ✓ \\\"quoted\\\"\"}",
      "[1, 2, 3]",
      "{\"z\": 1, \"a\": 2,   \"m\":    3}", // jsonb reorders and respaces: both send its text
      "\"just a string\"",
    };
    try (Connection c = fx.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO dbz.outbox (id, aggregatetype, aggregateid, type, payload)"
                    + " VALUES (?, ?, ?, ?, ?::jsonb)")) {
      for (int i = 0; i < 12; i++) {
        ps.setObject(1, UUID.randomUUID());
        ps.setString(2, i % 2 == 0 ? order : customer);
        ps.setString(3, "agg-" + (i % 4));
        ps.setString(4, i % 3 == 0 ? created : updated);
        ps.setString(5, payloads[i % payloads.length]);
        ps.executeUpdate();
      }
    }
  }

  private static Properties engineProperties() {
    Properties p = new Properties();
    p.setProperty("name", "debezium-compat");
    p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
    p.setProperty("offset.flush.interval.ms", "60000");
    p.setProperty("database.hostname", Services.pgHost());
    p.setProperty("database.port", Integer.toString(Services.pgPort()));
    p.setProperty("database.dbname", fx.db.name());
    p.setProperty("database.user", Services.pgUser());
    p.setProperty("database.password", Services.pgPassword());
    p.setProperty("topic.prefix", "compat");
    p.setProperty("plugin.name", "pgoutput");
    p.setProperty("slot.name", fx.db.name() + "_dbz");
    p.setProperty("publication.name", "dbz");
    p.setProperty("publication.autocreate.mode", "disabled");
    p.setProperty("snapshot.mode", "no_data"); // the slot predates the rows: streamed from the WAL
    p.setProperty("table.include.list", "dbz.outbox");
    // The connector's own __debezium.context.* headers (connector name, task, run id) are not the
    // router's and name the Debezium run: left out of the comparison, the relay has none.
    p.setProperty("extended.headers.enabled", "false");
    return p;
  }

  @Test
  void theRelayPublishesTheRecordsOfTheRoutersDefaults() throws Exception {
    List<Rec> debezium = route(Map.of());
    List<Rec> relay =
        publish(
            "sink.kafka.headers = debezium\n"
                + "routing.destination = \"outbox.event.${aggregate_type}\"\n"
                + COLUMNS,
            debezium.stream().map(Rec::topic));

    assertSame(relay, debezium);
    assertThat(debezium.get(0).headers()).extracting(h -> h.getKey()).containsExactly("id");
  }

  @Test
  void additionalPlacementAndRouteByFieldGiveTheSameRecordsToo() throws Exception {
    List<Rec> debezium =
        route(
            Map.of(
                "table.fields.additional.placement", "type:header:eventType,aggregateid:header",
                "route.by.field", "type"));
    List<Rec> relay =
        publish(
            "sink.kafka { headers = debezium, additional-placement ="
                + " \"event_type:header:eventType,aggregate_id:header:aggregateid\" }\n"
                + "routing.destination = \"outbox.event.${event_type}\"\n"
                + COLUMNS,
            debezium.stream().map(Rec::topic));

    assertSame(relay, debezium);
    assertThat(debezium.get(0).headers())
        .extracting(h -> h.getKey())
        .containsExactly("id", "eventType", "aggregateid");
    assertThat(debezium).extracting(Rec::topic).contains("outbox.event." + created);
  }

  @Test
  void theCdcSourceReadsTheTableUnderItsOwnNamesToo() throws Exception {
    // Topics of this test's own (route.topic.replacement): the others' already hold these rows.
    List<Rec> debezium = route(Map.of("route.topic.replacement", "cdc.event.${routedByValue}"));
    // The relay's slot is new: its catch-up reads the 12 rows from the table; a 13th row, written
    // once the relay runs, comes through the stream (its change event under Debezium's names).
    UUID streamed = UUID.randomUUID();
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    Logger relayLog = (Logger) LoggerFactory.getLogger("io.outbox");
    logged.start();
    relayLog.addAppender(logged);
    List<Rec> relay;
    try {
      relay =
          publish(
              // No reconcile sweep: the 13th row must come through the stream.
              fx.cdc("reconcile-interval = 1h")
                  + "sink.kafka.headers = debezium\n"
                  + "routing.destination = \"cdc.event.${aggregate_type}\"\n"
                  + COLUMNS,
              debezium.stream().map(Rec::topic),
              () -> {
                await().atMost(Duration.ofSeconds(60)).until(() -> fx.slotConfirmedLsn() >= 0);
                fx.count(
                    "WITH i AS (INSERT INTO dbz.outbox (id, aggregatetype, aggregateid, type,"
                        + " payload) VALUES ('"
                        + streamed
                        + "', '"
                        + order
                        + "', 'agg-9', 'Late', '{\"late\": true}') RETURNING 1)"
                        + " SELECT count(*) FROM i");
              });
    } finally {
      relayLog.detachAppender(logged);
    }
    // The stream read the row's change event: it never stopped (a restart would catch the row up
    // from the table instead).
    assertThat(List.copyOf(logged.list))
        .extracting(ILoggingEvent::getFormattedMessage)
        .noneMatch(m -> m.contains("the change stream stopped"));

    Rec late =
        relay.stream().filter(r -> r.id().equals(streamed.toString())).findFirst().orElseThrow();
    assertThat(late)
        .isEqualTo(
            new Rec(
                "cdc.event." + order,
                "agg-9",
                "{\"late\": true}",
                List.of(Map.entry("id", streamed.toString()))));
    assertSame(relay.stream().filter(r -> r != late).toList(), debezium);
  }

  /** One record as it would be written to Kafka: bytes, as the consumer reads them. */
  record Rec(String topic, String key, String value, List<Map.Entry<String, String>> headers) {
    String id() {
      return headers.stream()
          .filter(h -> h.getKey().equals("id"))
          .findFirst()
          .orElseThrow()
          .getValue();
    }
  }

  /**
   * The captured change events through Debezium's router configured with {@code config} (over its
   * defaults), then Connect's converters.
   */
  private static List<Rec> route(Map<String, String> config) {
    List<Rec> out = new ArrayList<>();
    try (EventRouter<SourceRecord> router = new EventRouter<>();
        StringConverter keys = new StringConverter();
        StringConverter values = new StringConverter();
        SimpleHeaderConverter headers = new SimpleHeaderConverter()) {
      router.configure(config);
      keys.configure(Map.of(), true);
      values.configure(Map.of(), false);
      headers.configure(Map.of());
      for (SourceRecord change : changes) {
        // A copy: the router adds its headers to the record's own, and each test routes anew.
        SourceRecord r =
            router.apply(
                change.newRecord(
                    change.topic(),
                    change.kafkaPartition(),
                    change.keySchema(),
                    change.key(),
                    change.valueSchema(),
                    change.value(),
                    change.timestamp(),
                    change.headers().duplicate()));
        if (r == null) {
          continue;
        }
        List<Map.Entry<String, String>> hs = new ArrayList<>();
        for (Header h : r.headers()) {
          hs.add(
              Map.entry(
                  h.key(),
                  utf8(headers.fromConnectHeader(r.topic(), h.key(), h.schema(), h.value()))));
        }
        out.add(
            new Rec(
                r.topic(),
                utf8(keys.fromConnectData(r.topic(), r.keySchema(), r.key())),
                utf8(values.fromConnectData(r.topic(), r.valueSchema(), r.value())),
                hs));
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  /** The relay's records of the same rows, published anew with {@code extra} in the pipeline. */
  private static List<Rec> publish(String extra, java.util.stream.Stream<String> topics)
      throws Exception {
    return publish(extra, topics, () -> {});
  }

  /** What a test does while the relay runs. */
  interface WhileRunning {
    void run() throws Exception;
  }

  private static List<Rec> publish(
      String extra, java.util.stream.Stream<String> topics, WhileRunning whileRunning)
      throws Exception {
    try (Connection c = fx.connect();
        Statement s = c.createStatement()) {
      s.execute("UPDATE dbz.outbox SET published_at = NULL");
    }
    List<String> distinct = topics.distinct().toList();
    Relay relay = fx.start(extra);
    try {
      whileRunning.run();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> fx.count("SELECT count(*) FROM dbz.outbox WHERE published_at IS NULL") == 0);
    } finally {
      relay.close(Duration.ofSeconds(10));
    }
    List<Rec> out = new ArrayList<>();
    for (String topic : distinct) {
      for (ConsumerRecord<String, byte[]> r :
          KafkaTestSupport.readToEnd(Services.kafkaBootstrap(), topic, Duration.ofSeconds(20))) {
        List<Map.Entry<String, String>> hs = new ArrayList<>();
        for (org.apache.kafka.common.header.Header h : r.headers()) {
          hs.add(Map.entry(h.key(), utf8(h.value())));
        }
        out.add(new Rec(r.topic(), r.key(), utf8(r.value()), hs));
      }
    }
    return out;
  }

  private static void assertSame(List<Rec> relay, List<Rec> debezium) {
    assertThat(debezium).hasSize(12);
    Comparator<Rec> byId = Comparator.comparing(Rec::id);
    assertThat(relay.stream().sorted(byId).toList())
        .containsExactlyElementsOf(debezium.stream().sorted(byId).toList());
  }

  private static String utf8(byte[] bytes) {
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }
}
