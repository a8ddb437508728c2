package io.outbox.sink.kafka;

import static io.outbox.sink.kafka.Contexts.context;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.support.SettingsReader;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

class ProducerPropertiesTest {

  private static Map<String, Object> producerConfig(String hocon) {
    return ProducerProperties.producerConfig(
        SettingsReader.settings(context(hocon), KafkaSinkSettings::read, "kafka sink"), "orders");
  }

  @Test
  void aCompressionTypeWhoseCodecIsMissingIsRefusedNamingIt() {
    assertThat(ProducerProperties.codecProblem("zstd", codec -> false))
        .isEqualTo(
            "needs the zstd codec, which this installation lacks (the slim archive leaves the lz4,"
                + " snappy and zstd codecs out): use gzip or none, or the full archive, got zstd");
    assertThat(ProducerProperties.codecProblem("gzip", codec -> false)).isNull();
    assertThat(ProducerProperties.codecProblem("none", codec -> false)).isNull();
    // Here the codecs are on the class path, as in the full archive.
    assertThat(
            SettingsReader.problems(
                context("producer.compression.type = zstd"), KafkaSinkSettings::read))
        .isEmpty();
  }

  @Test
  void relayOwnsIdempotenceAcksAndBootstrapServers() {
    Map<String, Object> config = producerConfig("bootstrap-servers = \"k1:9092, k2:9092\"");
    assertThat(config)
        .containsEntry("enable.idempotence", "true")
        .containsEntry("acks", "all")
        .containsEntry("bootstrap.servers", "k1:9092,k2:9092")
        .doesNotContainKeys("key.serializer", "value.serializer");
  }

  @Test
  void performanceDefaultsApplyUnlessTheUserSetsThem() {
    assertThat(producerConfig(""))
        .containsEntry("linger.ms", "5")
        .containsEntry("batch.size", "65536")
        .containsEntry("max.in.flight.requests.per.connection", "5")
        .containsEntry("client.id", "outbox-relay-orders")
        .doesNotContainKey("compression.type");
    assertThat(producerConfig("producer { linger.ms = 50, \"batch.size\" = 1024, client.id = x }"))
        .containsEntry("linger.ms", "50")
        .containsEntry("batch.size", "1024")
        .containsEntry("client.id", "x");
  }

  @Test
  void sendTimeoutBoundsDeliveryAndBlockingUnlessSet() {
    Map<String, Object> config = producerConfig("send-timeout = 3s");
    assertThat(config)
        .containsEntry("delivery.timeout.ms", "3000")
        .containsEntry("max.block.ms", "1500") // half is left for asking about a missing topic
        .containsEntry("request.timeout.ms", "2995");
    assertThat(producerConfig("send-timeout = 2m"))
        .containsEntry("delivery.timeout.ms", "120000")
        .containsEntry("max.block.ms", "115000") // probe-timeout (5 s) is left
        .containsEntry("request.timeout.ms", "30000");
    assertThat(producerConfig("send-timeout = 10s\nproducer.max.block.ms = 1000"))
        .containsEntry("max.block.ms", "1000");
  }

  @Test
  void effectiveConfigIsAcceptedByTheKafkaClient() {
    Map<String, Object> config =
        new java.util.HashMap<>(producerConfig("send-timeout = 3s\nproducer.linger.ms = 20"));
    config.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
    config.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
    ProducerConfig parsed = new ProducerConfig(config);
    assertThat(parsed.getInt("delivery.timeout.ms"))
        .isGreaterThanOrEqualTo(
            (int) (parsed.getLong("linger.ms") + parsed.getInt("request.timeout.ms")));
  }

  @Test
  void probeCopiesConnectionSettingsButNotProducerTuning() {
    Map<String, Object> producer =
        producerConfig(
            "producer { security.protocol = SSL, \"ssl.truststore.location\" = /t.jks, linger.ms = 9 }");
    Map<String, Object> admin = ProducerProperties.adminConfig(producer, Duration.ofSeconds(2));
    assertThat(admin)
        .containsEntry("bootstrap.servers", "127.0.0.1:9092")
        .containsEntry("security.protocol", "SSL")
        .containsEntry("ssl.truststore.location", "/t.jks")
        .containsEntry("client.id", "outbox-relay-orders-probe")
        .containsEntry("request.timeout.ms", "2000")
        .containsEntry("default.api.timeout.ms", "2000")
        .doesNotContainKeys("linger.ms", "acks", "enable.idempotence", "batch.size");
  }

  @Test
  void secretsAreMaskedByTypeAndByName() {
    assertThat(
            ProducerProperties.masked(
                Map.of(
                    "ssl.key.password", "a",
                    "sasl.jaas.config", "b",
                    "my.api.token", "c",
                    "linger.ms", "5")))
        .containsEntry("ssl.key.password", "******")
        .containsEntry("sasl.jaas.config", "******")
        .containsEntry("my.api.token", "******")
        .containsEntry("linger.ms", "5");
  }
}
