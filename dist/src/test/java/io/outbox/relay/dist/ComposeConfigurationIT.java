package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.outbox.relay.dist.UnpackedDistribution.Result;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.TestDatabase;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The configuration docker-compose.yml runs (config/docker.conf, both pipelines) and the RabbitMQ
 * definitions it loads (config/rabbitmq/definitions.json), run by the unpacked archive against the
 * test services through the same environment variables compose sets: check-config, migrate, and run
 * delivers to Kafka and, through the declared exchange and bound queue, to RabbitMQ. RabbitMQ gets
 * a throwaway virtual host, so the fixed exchange and queue names collide with nothing.
 */
class ComposeConfigurationIT {
  private static final String CONFIG = "config/docker.conf";
  private static final int EVENTS = 10;

  @TempDir static Path unpackDir;
  private static UnpackedDistribution dist;

  @BeforeAll
  static void unpack() {
    dist = UnpackedDistribution.unpack(unpackDir);
  }

  @Test
  void composeConfigurationRelaysToKafkaAndRabbitMq(@TempDir Path work) throws Exception {
    String vhost = "outbox_dist_" + UUID.randomUUID().toString().substring(0, 8);
    Path config = RepositoryFiles.path(CONFIG);
    rabbitmqctl("add_vhost", vhost);
    try (TestDatabase db = TestDatabase.create("dist_compose")) {
      rabbitmqctl("set_permissions", "-p", vhost, rabbitUser(), ".*", ".*", ".*");
      declareDefinitions(vhost);
      int port = RunningRelay.freePort();
      Map<String, String> env = new HashMap<>();
      env.put("APP_DB_URL", db.url());
      env.put("APP_DB_USER", db.user());
      env.put("APP_DB_PASSWORD", db.password());
      env.put("KAFKA_BOOTSTRAP_SERVERS", Services.kafkaBootstrap());
      env.put("RABBITMQ_URI", rabbitUri(vhost));
      env.put("RABBITMQ_PASSWORD", rabbitPassword());
      env.put("OUTBOX_RELAY_HTTP_PORT", Integer.toString(port));

      Result check = dist.run(env, "check-config", "--config", config.toString());
      assertThat(check.exitCode()).as(check.toString()).isZero();
      assertThat(check.err()).as("warnings of check-config").doesNotContain("plain text");
      Result migrate = dist.run(env, "migrate", "--config", config.toString());
      assertThat(migrate.exitCode()).as(migrate.toString()).isZero();

      Set<String> orders = insert(db, "outbox", "order", "OrderCreated");
      Set<String> notifications =
          insert(db, "notification_outbox", "notification", "NotificationRequested");

      RunningRelay relay = RunningRelay.start(dist.launcher(), work, env, config, port);
      try {
        Set<String> onKafka = new HashSet<>();
        await("the orders pipeline's events on Kafka topic outbox.order")
            .atMost(Duration.ofSeconds(90))
            .pollInterval(Duration.ofSeconds(1))
            .untilAsserted(
                () -> {
                  if (KafkaTestSupport.topicExists("outbox.order")) {
                    KafkaTestSupport.readToEnd(
                            Services.kafkaBootstrap(), "outbox.order", Duration.ofSeconds(30))
                        .forEach(r -> onKafka.add(KafkaTestSupport.header(r, "event-id")));
                  }
                  assertThat(onKafka).as("relay log:\n%s", relay.log()).containsAll(orders);
                });

        Set<String> onRabbit = new HashSet<>();
        try (Connection connection = rabbit(vhost);
            Channel channel = connection.createChannel()) {
          await("the notifications pipeline's events in queue notifications")
              .atMost(Duration.ofSeconds(60))
              .untilAsserted(
                  () -> {
                    for (GetResponse m = channel.basicGet("notifications", true);
                        m != null;
                        m = channel.basicGet("notifications", true)) {
                      onRabbit.add(m.getProps().getMessageId());
                    }
                    assertThat(onRabbit).as("relay log:\n%s", relay.log()).isEqualTo(notifications);
                  });
        }

        HttpResponse<String> ready = relay.get("/health/ready");
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        assertThat(ready.body()).contains("orders", "notifications");
      } finally {
        relay.stop();
      }
    } finally {
      rabbitmqctl("delete_vhost", vhost);
    }
  }

  /** Inserts {@link #EVENTS} rows into {@code table}; returns their event ids. */
  private static Set<String> insert(TestDatabase db, String table, String type, String eventType)
      throws Exception {
    Set<String> ids = new HashSet<>();
    try (java.sql.Connection c = db.connect();
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO "
                    + table
                    + " (aggregate_type, aggregate_id, event_type, payload)"
                    + " VALUES (?, ?, ?, '{\"n\": 1}'::jsonb) RETURNING event_id")) {
      for (int i = 0; i < EVENTS; i++) {
        insert.setString(1, type);
        insert.setString(2, type + "-" + (i % 3));
        insert.setString(3, eventType);
        try (ResultSet rs = insert.executeQuery()) {
          rs.next();
          ids.add(rs.getString(1));
        }
      }
    }
    return ids;
  }

  /** Declares the exchanges, queues and bindings of definitions.json in {@code vhost}. */
  private static void declareDefinitions(String vhost) throws Exception {
    JsonNode definitions = RepositoryFiles.json("config/rabbitmq/definitions.json");
    try (Connection connection = rabbit(vhost);
        Channel channel = connection.createChannel()) {
      for (JsonNode e : definitions.path("exchanges")) {
        channel.exchangeDeclare(
            e.path("name").asText(),
            e.path("type").asText(),
            e.path("durable").asBoolean(),
            e.path("auto_delete").asBoolean(),
            Map.of());
      }
      for (JsonNode q : definitions.path("queues")) {
        channel.queueDeclare(
            q.path("name").asText(),
            q.path("durable").asBoolean(),
            false,
            q.path("auto_delete").asBoolean(),
            Map.of("x-queue-type", q.path("arguments").path("x-queue-type").asText("classic")));
      }
      for (JsonNode b : definitions.path("bindings")) {
        channel.queueBind(
            b.path("destination").asText(),
            b.path("source").asText(),
            b.path("routing_key").asText());
      }
    }
  }

  private static Connection rabbit(String vhost) throws Exception {
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(rabbitUri(vhost));
    return factory.newConnection("compose-configuration-it");
  }

  /** The test broker's URI with {@code vhost} instead of its virtual host. */
  private static String rabbitUri(String vhost) {
    String uri = Services.rabbitUri();
    return uri.substring(0, uri.lastIndexOf('/') + 1) + vhost;
  }

  private static String rabbitPassword() {
    String userInfo = URI.create(Services.rabbitUri()).getUserInfo();
    return userInfo == null || !userInfo.contains(":") ? "guest" : userInfo.split(":", 2)[1];
  }

  private static String rabbitUser() {
    String userInfo = URI.create(Services.rabbitUri()).getUserInfo();
    return userInfo == null ? "guest" : userInfo.split(":", 2)[0];
  }

  private static void rabbitmqctl(String... args) {
    List<String> command = new java.util.ArrayList<>();
    command.add("rabbitmqctl");
    command.addAll(List.of(args));
    Result result = UnpackedDistribution.exec(Path.of("."), Map.of(), command);
    assertThat(result.exitCode()).as(result.toString()).isZero();
  }
}
