package io.outbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;

/** Proves that the services of {@code scripts/services.sh} are there and fit for the tests. */
class ServicesIT {
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);
  private static final String DATABASES = "SELECT count(*) FROM pg_database WHERE datname = ?";
  private static final String SLOTS =
      "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?";
  private static final String ACTIVE_SLOTS =
      "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND active";

  @Test
  void postgresAnswersWithLogicalWalLevelInAFreshDatabase() throws SQLException {
    try (TestDatabase db = TestDatabase.create("ServicesIT");
        Connection connection = db.connect();
        Statement statement = connection.createStatement()) {
      assertThat(scalar(statement, "SHOW wal_level")).isEqualTo("logical");
      assertThat(scalar(statement, "SELECT current_database()")).isEqualTo(db.name());
      assertThat(db.url()).isEqualTo(Services.jdbcUrl(db.name()));
    }
  }

  @Test
  void closingTestDatabaseDropsItAndItsReplicationSlots() throws SQLException {
    TestDatabase db = TestDatabase.create("slots_it");
    String slot = db.name() + "_slot";
    try (Connection connection = db.connect();
        PreparedStatement create =
            connection.prepareStatement(
                "SELECT pg_create_logical_replication_slot(?, 'pgoutput')")) {
      create.setString(1, slot);
      create.execute();
    }

    db.close();
    db.close();

    try (Connection admin =
        DriverManager.getConnection(
            Services.jdbcUrl("postgres"), Services.pgUser(), Services.pgPassword())) {
      assertThat(count(admin, "SELECT count(*) FROM pg_database WHERE datname = ?", db.name()))
          .isZero();
      assertThat(
              count(admin, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ?", slot))
          .isZero();
    }
  }

  @Test
  void closingTestDatabaseEndsAnActiveReplicationStreamAndDropsItsSlot() throws SQLException {
    TestDatabase db = TestDatabase.create("active_slot_it");
    String slot = db.name() + "_slot";
    try (Connection connection = db.connect();
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE PUBLICATION testkit_pub FOR ALL TABLES");
    }
    Properties properties = new Properties();
    PGProperty.USER.set(properties, db.user());
    PGProperty.PASSWORD.set(properties, db.password());
    PGProperty.REPLICATION.set(properties, "database");
    PGProperty.ASSUME_MIN_SERVER_VERSION.set(properties, "10");
    PGProperty.PREFER_QUERY_MODE.set(properties, "simple");
    try (Connection replication = DriverManager.getConnection(db.url(), properties)) {
      PGConnection pg = replication.unwrap(PGConnection.class);
      pg.getReplicationAPI()
          .createReplicationSlot()
          .logical()
          .withSlotName(slot)
          .withOutputPlugin("pgoutput")
          .make();
      pg.getReplicationAPI()
          .replicationStream()
          .logical()
          .withSlotName(slot)
          .withSlotOption("proto_version", "1")
          .withSlotOption("publication_names", "testkit_pub")
          .start();
      try (Connection admin = adminConnection()) {
        assertThat(count(admin, ACTIVE_SLOTS, slot)).isEqualTo(1);
      }

      db.close();

      try (Connection admin = adminConnection()) {
        assertThat(count(admin, DATABASES, db.name())).isZero();
        assertThat(count(admin, SLOTS, slot)).isZero();
      }
    } catch (SQLException expectedOnClose) {
      // The server ended the replication connection; closing it may complain about that.
      String state = expectedOnClose.getSQLState();
      if (state == null || !state.startsWith("08")) {
        throw expectedOnClose;
      }
    }
  }

  @Test
  void kafkaRoundTripsKeyValueAndHeaders() throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("services-it");
    KafkaTestSupport.createTopic(topic, 3);
    assertThat(KafkaTestSupport.topicExists(topic)).isTrue();
    byte[] value = "{\"n\":1}".getBytes(StandardCharsets.UTF_8);
    try (KafkaProducer<String, byte[]> producer = KafkaTestSupport.producer()) {
      ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, "order-1", value);
      record.headers().add("event-type", "OrderCreated".getBytes(StandardCharsets.UTF_8));
      producer.send(record).get();
    }

    List<ConsumerRecord<String, byte[]>> records =
        KafkaTestSupport.readRecords(topic, 1, READ_TIMEOUT);

    assertThat(records).hasSize(1);
    ConsumerRecord<String, byte[]> received = records.get(0);
    assertThat(received.key()).isEqualTo("order-1");
    assertThat(received.value()).isEqualTo(value);
    assertThat(KafkaTestSupport.valueAsString(received)).isEqualTo("{\"n\":1}");
    assertThat(KafkaTestSupport.header(received, "event-type")).isEqualTo("OrderCreated");
    assertThat(KafkaTestSupport.header(received, "missing")).isNull();
  }

  @Test
  void readRecordsReturnsWhatArrivedWhenTheTimeoutPasses() throws Exception {
    String topic = KafkaTestSupport.uniqueTopic("services-it-partial");
    KafkaTestSupport.createTopic(topic, 1);
    try (KafkaProducer<String, byte[]> producer = KafkaTestSupport.producer()) {
      producer.send(new ProducerRecord<>(topic, "k", new byte[] {1})).get();
      producer.send(new ProducerRecord<>(topic, "k", new byte[] {2})).get();
    }

    List<ConsumerRecord<String, byte[]>> records =
        KafkaTestSupport.readRecords(topic, 5, Duration.ofSeconds(3));

    assertThat(records).extracting(r -> r.value()[0]).containsExactly((byte) 1, (byte) 2);
  }

  @Test
  void readRecordsOfAMissingTopicReturnsNothingAndDoesNotCreateIt() {
    String topic = KafkaTestSupport.uniqueTopic("services-it-missing");

    assertThat(KafkaTestSupport.readRecords(topic, 1, Duration.ofSeconds(2))).isEmpty();
    assertThat(KafkaTestSupport.topicExists(topic)).isFalse();
  }

  @Test
  void kafkaBrokerRefusesARecordAboveItsDefaultMessageSize() {
    String topic = KafkaTestSupport.uniqueTopic("services-it-large");
    KafkaTestSupport.createTopic(topic, 1);
    // The client would refuse it itself at its own 1 MiB limit; raise that so the broker decides.
    Map<String, Object> config =
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            Services.kafkaBootstrap(),
            ProducerConfig.MAX_REQUEST_SIZE_CONFIG,
            8 * 1024 * 1024,
            ProducerConfig.COMPRESSION_TYPE_CONFIG,
            "none");
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer())) {
      ProducerRecord<String, byte[]> tooLarge =
          new ProducerRecord<>(topic, "k", new byte[2 * 1024 * 1024]);

      assertThatThrownBy(() -> producer.send(tooLarge).get())
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(RecordTooLargeException.class);
    }
  }

  @Test
  void rabbitMqAnswersTheAmqpHandshake() throws Exception {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(Services.rabbitHost(), Services.rabbitPort()), 5_000);
      socket.setSoTimeout(5_000);
      OutputStream out = socket.getOutputStream();
      out.write(new byte[] {'A', 'M', 'Q', 'P', 0, 0, 9, 1});
      out.flush();
      DataInputStream in = new DataInputStream(socket.getInputStream());

      // The server's first frame is the method frame Connection.Start (class 10, method 10).
      assertThat(in.readUnsignedByte()).as("frame type").isEqualTo(1);
      assertThat(in.readUnsignedShort()).as("channel").isZero();
      assertThat(in.readInt()).as("frame size").isPositive();
      assertThat(in.readUnsignedShort()).as("class id").isEqualTo(10);
      assertThat(in.readUnsignedShort()).as("method id").isEqualTo(10);
    }
  }

  private static Connection adminConnection() throws SQLException {
    return DriverManager.getConnection(
        Services.jdbcUrl("postgres"), Services.pgUser(), Services.pgPassword());
  }

  private static String scalar(Statement statement, String sql) throws SQLException {
    try (ResultSet rs = statement.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static long count(Connection connection, String sql, String parameter)
      throws SQLException {
    try (PreparedStatement statement = connection.prepareStatement(sql)) {
      statement.setString(1, parameter);
      try (ResultSet rs = statement.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
