package io.outbox.bench;

import io.outbox.relay.cli.LocalServices;
import java.io.PrintWriter;
import picocli.CommandLine.Option;

/** {@code bench}'s options of where the services run: PostgreSQL and the brokers. */
final class ServiceOptions {

  @Option(
      names = "--pg-url",
      paramLabel = "JDBC_URL",
      defaultValue =
          "jdbc:postgresql://${env:OUTBOX_PG_HOST:-127.0.0.1}:${env:OUTBOX_PG_PORT:-5432}/postgres",
      description =
          "A database of the PostgreSQL server; the run creates its own beside it"
              + " (default: ${DEFAULT-VALUE}). Password: OUTBOX_PG_PASSWORD.")
  String pgUrl;

  @Option(
      names = "--pg-user",
      paramLabel = "USER",
      defaultValue = "${env:OUTBOX_PG_USER:-postgres}",
      description = "PostgreSQL user (default: ${DEFAULT-VALUE}).")
  String pgUser;

  @Option(
      names = "--kafka-bootstrap",
      paramLabel = "HOST:PORT",
      defaultValue = "${env:OUTBOX_KAFKA_BOOTSTRAP:-127.0.0.1:9092}",
      description = "Kafka bootstrap servers (default: ${DEFAULT-VALUE}).")
  String kafkaBootstrap;

  @Option(
      names = "--rabbitmq-uri",
      paramLabel = "URI",
      defaultValue = "${env:OUTBOX_RABBITMQ_URI:-amqp://guest:guest@127.0.0.1:5672/%2f}",
      description = "RabbitMQ URI (default: amqp://guest:guest@127.0.0.1:5672/%%2f).")
  String rabbitUri;

  @Option(
      names = "--nats-url",
      paramLabel = "URL",
      defaultValue = "${env:OUTBOX_NATS_URL:-nats://127.0.0.1:4222}",
      description = "NATS server with JetStream (default: ${DEFAULT-VALUE}).")
  String natsUrl;

  @Option(
      names = "--redis-uri",
      paramLabel = "URI",
      defaultValue = "${env:OUTBOX_REDIS_URI:-redis://127.0.0.1:6379}",
      description = "Redis server (default: ${DEFAULT-VALUE}).")
  String redisUri;

  @Option(
      names = "--skip-services",
      description = "Do not run scripts/services.sh up: the services already run.")
  boolean skipServices;

  /** Starts the checkout's services, unless --skip-services. */
  void up(PrintWriter out) throws InterruptedException {
    if (!skipServices) {
      LocalServices.up(LocalServices.home(), out, "bench");
    }
  }

  /** The brokers of run {@code run}: its topic, exchange, subject or stream key is its own. */
  Brokers brokers(String run, int partitions, int lingerMs) {
    return new Brokers(
        kafkaBootstrap, rabbitUri, natsUrl, redisUri, "bench-" + run + ".", partitions, lingerMs);
  }

  /** The PostgreSQL password, from OUTBOX_PG_PASSWORD. */
  String pgPassword() {
    return System.getenv().getOrDefault("OUTBOX_PG_PASSWORD", "");
  }
}
