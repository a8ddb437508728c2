package io.outbox.bench;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The broker side of a run: where its events go (a fresh Kafka topic, a RabbitMQ exchange with a
 * bounded queue bound to it, a bounded JetStream stream or a Redis stream key), the producer
 * settings every Kafka publisher of the run shares, and the message shape the relay produces, for
 * the baselines to copy.
 *
 * @param kafkaBootstrap Kafka bootstrap servers
 * @param rabbitUri RabbitMQ URI
 * @param natsUrl NATS server URL
 * @param redisUri Redis URI, {@code redis://host:port}
 * @param prefix the run's destination prefix, e.g. {@code bench-3f9a0c12.}
 * @param partitions partitions of the topic
 * @param lingerMs the Kafka producers' {@code linger.ms}, the relay's and the baselines' alike
 */
record Brokers(
    String kafkaBootstrap,
    String rabbitUri,
    String natsUrl,
    String redisUri,
    String prefix,
    int partitions,
    int lingerMs) {

  /** The relay's default {@code linger.ms} (sink.kafka reference.conf). */
  static final int DEFAULT_LINGER_MS = 5;

  /** The topic or exchange of this run: the prefix plus the workload's aggregate type. */
  String destination() {
    return prefix + Workload.AGGREGATE_TYPE;
  }

  /** The routing key the relay's default template renders for the workload's events. */
  static final String ROUTING_KEY = Workload.AGGREGATE_TYPE + "." + Workload.EVENT_TYPE;

  /**
   * The queue bound to the exchange keeps at most this many messages (dropping the oldest): a
   * backlog run must not fill the broker, the latency run's consumer keeps it short.
   */
  static final int QUEUE_MAX_LENGTH = 10_000;

  /** Creates what the run's {@code sink} publishes to. */
  void declare(String sink) throws Exception {
    switch (sink) {
      case "kafka" -> createTopic();
      case "rabbitmq" -> declareExchange();
      case "nats" -> StreamBrokers.createStream(this);
      case "redis" -> StreamBrokers.deleteRedisKeys(this); // XADD creates the stream
      default -> throw new IllegalArgumentException("unknown sink " + sink);
    }
  }

  /** Deletes what {@link #declare} made and what the run published (best effort). */
  void remove(String sink) {
    switch (sink) {
      case "kafka" -> deleteTopic();
      case "rabbitmq" -> deleteExchange();
      case "nats" -> StreamBrokers.deleteStream(this);
      case "redis" -> StreamBrokers.deleteRedisKeys(this);
      default -> throw new IllegalArgumentException("unknown sink " + sink);
    }
  }

  /** The relay's producer defaults (sink.kafka reference.conf) plus what it always sets. */
  Properties producerProperties(String clientId) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafkaBootstrap);
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, String.valueOf(lingerMs));
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
    p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return p;
  }

  /** The settings the JSON report lists. */
  Map<String, Object> producerSettingsForReport() {
    return Map.of(
        "acks",
        "all",
        "enable.idempotence",
        true,
        "linger.ms",
        lingerMs,
        "batch.size",
        65536,
        "max.in.flight.requests.per.connection",
        5);
  }

  /**
   * The five identity headers every sink of the relay sends, in its order: {@code event-id}, {@code
   * event-type}, {@code aggregate-type}, {@code aggregate-id}, {@code created-at}.
   */
  static Map<String, String> relayHeaders(String eventId, String key, Instant at) {
    Map<String, String> h = new java.util.LinkedHashMap<>();
    h.put("event-id", eventId);
    h.put("event-type", Workload.EVENT_TYPE);
    h.put("aggregate-type", Workload.AGGREGATE_TYPE);
    h.put("aggregate-id", key);
    h.put("created-at", at.toString());
    return h;
  }

  /** The record the relay's Kafka sink would send for this event. */
  ProducerRecord<String, byte[]> record(String eventId, String key, byte[] payload, Instant at) {
    RecordHeaders headers = new RecordHeaders();
    relayHeaders(eventId, key, at).forEach((name, value) -> headers.add(name, utf8(value)));
    return new ProducerRecord<>(destination(), null, null, key, payload, headers);
  }

  /** Creates the topic of this run. */
  void createTopic() throws Exception {
    try (Admin admin = admin()) {
      admin
          .createTopics(List.of(new NewTopic(destination(), partitions, (short) 1)))
          .all()
          .get(60, TimeUnit.SECONDS);
    }
  }

  /** The ledger topic of an exactly-once relay of this run. */
  String ledgerTopic() {
    return prefix + "ledger";
  }

  /** Deletes the topic of this run and its ledger topic, if an exactly-once relay made one. */
  void deleteTopic() {
    for (String topic : List.of(destination(), ledgerTopic())) {
      try (Admin admin = admin()) {
        admin.deleteTopics(List.of(topic)).all().get(60, TimeUnit.SECONDS);
      } catch (Exception e) {
        // Best effort: left for the broker's retention; the name is unique to the run.
      }
    }
  }

  private Admin admin() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafkaBootstrap);
    return Admin.create(p);
  }

  /** Declares the exchange of this run and a bounded queue of the same name bound to it. */
  void declareExchange() throws Exception {
    try (Connection c = rabbitConnection("bench-setup");
        Channel ch = c.createChannel()) {
      ch.exchangeDeclare(destination(), "topic", true);
      ch.queueDeclare(
          destination(),
          true,
          false,
          false,
          Map.of("x-max-length", QUEUE_MAX_LENGTH, "x-overflow", "drop-head"));
      ch.queueBind(destination(), destination(), "#");
    }
  }

  /** Deletes the exchange and queue of this run (best effort). */
  void deleteExchange() {
    try (Connection c = rabbitConnection("bench-cleanup");
        Channel ch = c.createChannel()) {
      ch.queueDelete(destination());
      ch.exchangeDelete(destination());
    } catch (Exception e) {
      // Names are unique to the run; nothing else depends on them.
    }
  }

  Connection rabbitConnection(String name) throws Exception {
    ConnectionFactory f = new ConnectionFactory();
    f.setUri(rabbitUri);
    return f.newConnection(name);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
