package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.dist.UnpackedDistribution.Result;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.TestDatabase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The slim archive as a user gets it: the polling source with the Kafka and RabbitMQ sinks, none of
 * the CDC source's, the NATS or Redis sinks' or the Kafka codecs' jars; it migrates and relays to
 * Kafka, and a configuration that needs what it left out is refused with a message naming the full
 * archive.
 */
class SlimDistributionIT {
  @TempDir static Path unpackDir;
  private static UnpackedDistribution dist;

  @BeforeAll
  static void unpack() {
    dist = UnpackedDistribution.unpack(unpackDir);
  }

  @Test
  void holdsNoneOfTheJarsItLeavesOut() throws IOException {
    List<String> jars;
    try (Stream<Path> lib = Files.list(dist.home().resolve("lib"))) {
      jars = lib.map(p -> p.getFileName().toString()).sorted().toList();
    }
    assertThat(jars)
        .anyMatch(j -> j.startsWith("outbox-relay-polling-source-"))
        .anyMatch(j -> j.startsWith("outbox-relay-sink-kafka-"))
        .anyMatch(j -> j.startsWith("outbox-relay-sink-rabbitmq-"))
        .anyMatch(j -> j.startsWith("kafka-clients-"))
        .anyMatch(j -> j.startsWith("amqp-client-"))
        .noneMatch(
            j ->
                j.matches(
                    "(outbox-relay-cdc-source|outbox-relay-sink-nats|outbox-relay-sink-redis"
                        + "|debezium-|connect-|jetty-|jersey-|hk2-|bcprov|jnats|jedis"
                        + "|zstd-jni|lz4-java|snappy-java).*"));
    String notice = Files.readString(dist.home().resolve("NOTICE"), StandardCharsets.UTF_8);
    assertThat(notice).contains("kafka-clients").doesNotContain("debezium", "jnats", "zstd-jni");
    assertThat(Files.readString(dist.home().resolve("config/reference.conf")))
        .contains("outbox-relay.pipeline-defaults.source.polling")
        .doesNotContain("outbox-relay.pipeline-defaults.source.cdc");
    assertThat(dist.home().resolve("bin/outbox-relay")).isExecutable();
    assertThat(dist.home().resolve("docs/operations.md")).isRegularFile();
  }

  @Test
  void refusesWhatItLeftOutNamingTheFullArchive(@TempDir Path work) throws IOException {
    Path config = work.resolve("relay.conf");
    Files.writeString(
        config,
        """
        outbox-relay.pipelines {
          a { database.url = "jdbc:postgresql://127.0.0.1:1/a", source.type = cdc }
          b { database.url = "jdbc:postgresql://127.0.0.1:1/b", sink.type = nats }
          c {
            database.url = "jdbc:postgresql://127.0.0.1:1/c"
            sink.kafka.producer.compression.type = zstd
          }
        }
        """,
        StandardCharsets.UTF_8);

    Result check = dist.run("check-config", "--config", config.toString());

    assertThat(check.exitCode()).as(check.toString()).isNotZero();
    assertThat(check.err() + check.out())
        .contains(
            "unknown source type \"cdc\"; known: polling. The cdc source is not installed here:"
                + " the slim distribution (outbox-relay-slim-<version>) leaves it out")
        .contains("unknown sink type \"nats\"; known: kafka, rabbitmq. The nats sink is not")
        .contains("compression.type: needs the zstd codec, which this installation lacks");
  }

  @Test
  void migratesAndRelaysEventsToKafka(@TempDir Path work) throws Exception {
    String topicPrefix = KafkaTestSupport.uniqueTopic("slim");
    int port = RunningRelay.freePort();
    try (TestDatabase db = TestDatabase.create("slim_it")) {
      Path config = work.resolve("relay.conf");
      Files.writeString(
          config,
          """
          outbox-relay {
            http { host = "127.0.0.1", port = %d }
            shutdown-timeout = 15s
            pipelines.orders {
              database { url = "%s", user = "%s", password = "%s" }
              source { type = polling, polling.poll-interval = 250ms }
              sink.kafka { bootstrap-servers = "%s", producer.compression.type = gzip }
              routing.destination = "%s.${aggregate_type}"
            }
          }
          """
              .formatted(
                  port, db.url(), db.user(), db.password(), Services.kafkaBootstrap(), topicPrefix),
          StandardCharsets.UTF_8);
      Result migrate = dist.run("migrate", "--config", config.toString());
      assertThat(migrate.exitCode()).as(migrate.toString()).isZero();

      int events = OrderEvents.write(db, 20);

      RunningRelay relay = RunningRelay.start(dist.launcher(), work, Map.of(), config, port);
      try {
        List<ConsumerRecord<String, byte[]>> records =
            KafkaTestSupport.readRecords(topicPrefix + ".order", events, Duration.ofSeconds(60));
        assertThat(records).as(() -> "records; relay log:\n" + relay.log()).hasSize(events);
        await("every row marked published")
            .atMost(Duration.ofSeconds(30))
            .until(() -> OrderEvents.unpublished(db) == 0);
        assertThat(relay.get("/health/ready").statusCode()).isEqualTo(200);
      } finally {
        relay.stop();
      }
    }
  }
}
