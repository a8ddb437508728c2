package io.outbox.soak;

import io.outbox.testkit.BackdatingInterceptor;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.PrivateKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.config.ConfigResource;

/**
 * A private single-node Kafka with one topic per aggregate type. The {@link #FLAKY} topic refuses
 * records while {@code message.timestamp.before.max.ms = 0} is set on it: every record's timestamp
 * (the producer's send time) is then older than the broker's clock allows, the broker answers
 * {@code INVALID_TIMESTAMP} for the record, and the relay's Kafka sink classifies that broker error
 * as retryable for that event (an {@code ApiException} that is neither a size, topic, authorization
 * nor connection error). A topic with {@code min.insync.replicas = 2} would not do: the single
 * Kafka 4.3 broker took an {@code acks=all} write to such a topic of replication factor 1 (tried),
 * and {@code NOT_ENOUGH_REPLICAS} is a retriable error the producer retries by itself up to {@code
 * delivery.timeout.ms} anyway.
 *
 * <p>For relays that publish exactly once, a limit of 0 would refuse the transaction markers too
 * (stamped a moment before the partition's leader checks them): the coordinator takes that refusal
 * for a fatal error and leaves the transaction open for good, and every later registration of its
 * transactional id times out (seen in the first exactly-once soak). There the relays' producers
 * back-date every record to the {@link #FLAKY} topic by a day ({@link BackdatingInterceptor}) and
 * the topic refuses records over an hour old while refusing.
 */
final class KafkaSoakBroker implements SoakBroker {
  private static final String BEFORE_MAX_MS = "message.timestamp.before.max.ms";
  private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(10);
  private static final Map<String, Integer> PARTITIONS = Map.of(ORDER, 6, FLAKY, 2);

  private static final String REFUSING_EXACTLY_ONCE =
      String.valueOf(Duration.ofHours(1).toMillis());

  private final PrivateKafka kafka;
  private final String prefix;
  private final boolean exactlyOnce;

  private KafkaSoakBroker(PrivateKafka kafka, String prefix, boolean exactlyOnce) {
    this.kafka = kafka;
    this.prefix = prefix;
    this.exactlyOnce = exactlyOnce;
  }

  static KafkaSoakBroker start(String prefix, boolean exactlyOnce) {
    PrivateKafka kafka = PrivateKafka.start();
    try {
      PARTITIONS.forEach(
          (type, partitions) ->
              KafkaTestSupport.createTopic(kafka.bootstrap(), prefix + "." + type, partitions));
      return new KafkaSoakBroker(kafka, prefix, exactlyOnce);
    } catch (RuntimeException e) {
      kafka.close();
      throw e;
    }
  }

  @Override
  public String prefix() {
    return prefix;
  }

  @Override
  public String sinkConfig() {
    String kafkaBlock = "bootstrap-servers = \"" + kafka.bootstrap() + "\"";
    if (exactlyOnce) {
      kafkaBlock +=
          ", delivery = exactly-once, producer { \"interceptor.classes\" = \""
              + BackdatingInterceptor.class.getName()
              + "\", \""
              + BackdatingInterceptor.TOPICS_ENDING
              + "\" = \"."
              + FLAKY
              + "\" }";
    }
    return "type = kafka, kafka { " + kafkaBlock + " }";
  }

  @Override
  public boolean canRefuseRetryably() {
    return true;
  }

  @Override
  public void refuse(boolean refusing) {
    ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, prefix + "." + FLAKY);
    AlterConfigOp op =
        refusing
            ? new AlterConfigOp(
                new ConfigEntry(BEFORE_MAX_MS, exactlyOnce ? REFUSING_EXACTLY_ONCE : "0"),
                AlterConfigOp.OpType.SET)
            : new AlterConfigOp(new ConfigEntry(BEFORE_MAX_MS, ""), AlterConfigOp.OpType.DELETE);
    try (Admin admin = admin()) {
      admin
          .incrementalAlterConfigs(Map.of(topic, List.of(op)))
          .all()
          .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while altering " + topic.name(), e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException(
          "cannot " + op.opType() + " " + BEFORE_MAX_MS + " on " + topic.name() + ": " + e, e);
    }
  }

  @Override
  public void stop() {
    kafka.stop();
  }

  @Override
  public void kill() {
    kafka.kill();
  }

  @Override
  public void restart() {
    kafka.restart();
  }

  /** Every record of every topic, read from the beginning to the end offsets of the moment. */
  @Override
  public List<Delivery> deliveries(Set<UUID> expected, Duration timeout) {
    List<Delivery> out = new ArrayList<>();
    for (String type : PARTITIONS.keySet().stream().sorted().toList()) {
      for (ConsumerRecord<String, byte[]> r :
          KafkaTestSupport.readToEnd(kafka.bootstrap(), prefix + "." + type, timeout)) {
        String id = KafkaTestSupport.header(r, "event-id");
        if (id == null) {
          throw new IllegalStateException(
              "a record without an event-id header in "
                  + r.topic()
                  + "-"
                  + r.partition()
                  + " at offset "
                  + r.offset());
        }
        Instant sent = Instant.ofEpochMilli(r.timestamp());
        if (exactlyOnce && type.equals(FLAKY)) {
          sent = sent.plus(BackdatingInterceptor.BY); // the relays' producers back-dated it
        }
        out.add(
            new Delivery(
                UUID.fromString(id),
                sent,
                r.topic() + "-" + r.partition(),
                r.offset(),
                fingerprint(r.key(), r.value())));
      }
    }
    return out;
  }

  static int fingerprint(String key, byte[] body) {
    return 31 * Arrays.hashCode(key == null ? new byte[0] : key.getBytes(StandardCharsets.UTF_8))
        + Arrays.hashCode(body);
  }

  private Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrap()));
  }

  @Override
  public void close() {
    kafka.close();
  }

  @Override
  public String toString() {
    return kafka.toString();
  }
}
