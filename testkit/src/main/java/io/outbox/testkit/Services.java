package io.outbox.testkit;

import java.net.URI;

/**
 * Endpoints of the services integration tests run against, read from the environment variables that
 * {@code scripts/services.sh env} prints, with the same defaults as that script.
 *
 * <p>A variable that is unset or blank falls back to its default, except {@code
 * OUTBOX_PG_PASSWORD}, where the empty string is the default and a valid value.
 */
public final class Services {
  /** Environment variable holding the PostgreSQL host. */
  public static final String PG_HOST = "OUTBOX_PG_HOST";

  /** Environment variable holding the PostgreSQL port. */
  public static final String PG_PORT = "OUTBOX_PG_PORT";

  /** Environment variable holding the PostgreSQL superuser name. */
  public static final String PG_USER = "OUTBOX_PG_USER";

  /** Environment variable holding the PostgreSQL superuser's password. */
  public static final String PG_PASSWORD = "OUTBOX_PG_PASSWORD";

  /** Environment variable holding the Kafka bootstrap servers. */
  public static final String KAFKA_BOOTSTRAP = "OUTBOX_KAFKA_BOOTSTRAP";

  /** Environment variable holding the RabbitMQ AMQP URI. */
  public static final String RABBITMQ_URI = "OUTBOX_RABBITMQ_URI";

  /** Environment variable holding the NATS server URL (JetStream enabled). */
  public static final String NATS_URL = "OUTBOX_NATS_URL";

  /** Environment variable holding the Redis URI. */
  public static final String REDIS_URI = "OUTBOX_REDIS_URI";

  private Services() {}

  /** PostgreSQL host; default {@code 127.0.0.1}. */
  public static String pgHost() {
    return env(PG_HOST, "127.0.0.1");
  }

  /** PostgreSQL port; default {@code 5432}. */
  public static int pgPort() {
    String value = env(PG_PORT, "5432");
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalStateException(PG_PORT + " must be a port number, got '" + value + "'", e);
    }
  }

  /**
   * PostgreSQL user with the right to create databases and replication slots; default {@code
   * postgres}.
   */
  public static String pgUser() {
    return env(PG_USER, "postgres");
  }

  /** Password of {@link #pgUser()}; default empty (trust authentication). */
  public static String pgPassword() {
    String value = System.getenv(PG_PASSWORD);
    return value == null ? "" : value;
  }

  /** JDBC URL of {@code database} on the test PostgreSQL server. */
  public static String jdbcUrl(String database) {
    return "jdbc:postgresql://" + pgHost() + ":" + pgPort() + "/" + database;
  }

  /** Kafka bootstrap servers; default {@code 127.0.0.1:9092}. */
  public static String kafkaBootstrap() {
    return env(KAFKA_BOOTSTRAP, "127.0.0.1:9092");
  }

  /** RabbitMQ AMQP URI; default {@code amqp://guest:guest@127.0.0.1:5672/%2f}. */
  public static String rabbitUri() {
    return env(RABBITMQ_URI, "amqp://guest:guest@127.0.0.1:5672/%2f");
  }

  /** NATS server URL, JetStream enabled; default {@code nats://127.0.0.1:4222}. */
  public static String natsUrl() {
    return env(NATS_URL, "nats://127.0.0.1:4222");
  }

  /** Redis URI; default {@code redis://127.0.0.1:6379}. */
  public static String redisUri() {
    return env(REDIS_URI, "redis://127.0.0.1:6379");
  }

  /** Host part of {@link #rabbitUri()}. */
  public static String rabbitHost() {
    return rabbit().getHost();
  }

  /** Port of {@link #rabbitUri()}; 5672 (or 5671 for {@code amqps}) when the URI names none. */
  public static int rabbitPort() {
    URI uri = rabbit();
    if (uri.getPort() != -1) {
      return uri.getPort();
    }
    return "amqps".equalsIgnoreCase(uri.getScheme()) ? 5671 : 5672;
  }

  private static URI rabbit() {
    String value = rabbitUri();
    try {
      URI uri = URI.create(value);
      if (uri.getHost() == null) {
        throw new IllegalArgumentException("no host");
      }
      return uri;
    } catch (IllegalArgumentException e) {
      // The URI may carry a password: name the variable, not the value.
      throw new IllegalStateException(RABBITMQ_URI + " is not a valid amqp:// URI", e);
    }
  }

  private static String env(String name, String defaultValue) {
    String value = System.getenv(name);
    return value == null || value.isBlank() ? defaultValue : value;
  }
}
