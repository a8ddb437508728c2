package io.outbox.sink.kafka;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.support.SettingsReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.RoundRobinPartitioner;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.SslConfigs;

/**
 * The producer's properties: flattens the HOCON {@code producer} subtree, checks what the user set
 * against what the relay owns (idempotence, acks), and builds the effective client configuration.
 */
final class ProducerProperties {

  static final String IDEMPOTENCE = ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG;
  static final String ACKS = ProducerConfig.ACKS_CONFIG;
  static final String MAX_IN_FLIGHT = ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION;
  static final String RETRIES = ProducerConfig.RETRIES_CONFIG;
  static final String LINGER = ProducerConfig.LINGER_MS_CONFIG;
  static final String DELIVERY_TIMEOUT = ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG;
  static final String REQUEST_TIMEOUT = ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG;
  static final String MAX_BLOCK = ProducerConfig.MAX_BLOCK_MS_CONFIG;
  static final String CLIENT_ID = ProducerConfig.CLIENT_ID_CONFIG;
  static final String PARTITIONER_IGNORE_KEYS = ProducerConfig.PARTITIONER_IGNORE_KEYS_CONFIG;
  static final String PARTITIONER_CLASS = ProducerConfig.PARTITIONER_CLASS_CONFIG;
  static final String COMPRESSION = ProducerConfig.COMPRESSION_TYPE_CONFIG;

  /**
   * The compression types whose codec is a jar of its own (gzip is the JDK's), and a class of it:
   * the slim archive leaves those jars out.
   */
  private static final Map<String, String> CODECS =
      Map.of(
          "lz4", "net.jpountz.lz4.LZ4Factory",
          "snappy", "org.xerial.snappy.Snappy",
          "zstd", "com.github.luben.zstd.Zstd");

  /** The idempotent producer allows at most this many unacknowledged requests per connection. */
  private static final int MAX_IN_FLIGHT_WITH_IDEMPOTENCE = 5;

  /** The producer's own default request timeout, kept unless send-timeout is shorter. */
  private static final long DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

  /** Admin settings the probe decides itself rather than copying them from the producer. */
  private static final Set<String> PROBE_OWNED =
      Set.of(
          CLIENT_ID,
          REQUEST_TIMEOUT,
          AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
          AdminClientConfig.RETRIES_CONFIG);

  private static final ConfigDef DEFINITION = ProducerConfig.configDef();

  private ProducerProperties() {}

  /**
   * Flattens the {@code producer} subtree to dotted property names. {@code "linger.ms" = 10} is one
   * quoted key, {@code linger.ms = 10} nested objects: both give {@code linger.ms}; if a property
   * is written both ways the quoted key wins. Lists become comma-separated strings.
   */
  static Map<String, String> flatten(Config producer) {
    Map<String, String> nested = new TreeMap<>();
    Map<String, String> quoted = new TreeMap<>();
    for (Map.Entry<String, ConfigValue> e : producer.entrySet()) {
      List<String> parts = ConfigUtil.splitPath(e.getKey());
      String name = String.join(".", parts);
      (parts.size() == 1 ? quoted : nested).put(name, render(e.getValue()));
    }
    nested.putAll(quoted);
    return nested;
  }

  private static String render(ConfigValue value) {
    if (value.valueType() == ConfigValueType.LIST) {
      List<String> items = new ArrayList<>();
      for (Object item : (List<?>) value.unwrapped()) {
        items.add(String.valueOf(item));
      }
      return String.join(",", items);
    }
    return String.valueOf(value.unwrapped());
  }

  /** Every problem of the user's producer properties, named by full key path. */
  static void check(SettingsReader r, Map<String, String> producer, Duration sendTimeout) {
    for (Map.Entry<String, String> e : producer.entrySet()) {
      String owned = ownedProblem(r, e.getKey(), e.getValue().strip());
      String message = owned != null ? owned : typeProblem(e.getKey(), e.getValue());
      if (message != null) {
        r.problem("producer." + e.getKey(), message);
      }
    }
    if (sendTimeout != null) {
      timeoutProblems(r, producer, sendTimeout);
    }
  }

  /** A problem with a property the relay owns or bounds, or {@code null}. */
  private static String ownedProblem(SettingsReader r, String name, String value) {
    switch (name) {
      case ProducerConfig.BOOTSTRAP_SERVERS_CONFIG:
        return "is set by " + r.path("bootstrap-servers") + "; remove it here";
      case ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG:
      case ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG:
        return "is owned by the relay (String keys, byte[] values); remove it, got " + value;
      case ProducerConfig.TRANSACTIONAL_ID_CONFIG:
        return "is not supported: the relay uses an idempotent, non-transactional producer;"
            + " remove it";
      case IDEMPOTENCE:
        return value.equalsIgnoreCase("true")
            ? null
            : "must be true: the relay relies on the idempotent producer to keep per-key order"
                + " without duplicates from retries, got "
                + value;
      case ACKS:
        return value.equalsIgnoreCase("all") || value.equals("-1")
            ? null
            : "must be all (or -1): an event counts as published only once every in-sync replica"
                + " has it, got "
                + value;
      case MAX_IN_FLIGHT:
        Long inFlight = number(name, value);
        return inFlight != null && inFlight > MAX_IN_FLIGHT_WITH_IDEMPOTENCE
            ? "must be at most "
                + MAX_IN_FLIGHT_WITH_IDEMPOTENCE
                + " with the idempotent producer (per-key order), got "
                + value
            : null;
      case PARTITIONER_IGNORE_KEYS:
        return value.equalsIgnoreCase("true")
            ? "must be false: ignoring keys spreads an aggregate's events over partitions and"
                + " breaks per-key order, got "
                + value
            : null;
      case PARTITIONER_CLASS:
        return value.equals(RoundRobinPartitioner.class.getName())
            ? "must partition by key: round-robin spreads an aggregate's events over partitions"
                + " and breaks per-key order, got "
                + value
            : null;
      case COMPRESSION:
        return codecProblem(value, ProducerProperties::onClassPath);
      case RETRIES:
        Long retries = number(name, value);
        return retries != null && retries == 0
            ? "must be greater than 0 with the idempotent producer, got " + value
            : null;
      default:
        return null;
    }
  }

  /**
   * A problem when {@code compression.type} names a codec {@code present} does not find, or {@code
   * null}.
   */
  static String codecProblem(String value, Predicate<String> present) {
    String codec = CODECS.get(value.toLowerCase(Locale.ROOT));
    return codec == null || present.test(codec)
        ? null
        : "needs the "
            + value
            + " codec, which this installation lacks (the slim archive leaves the lz4, snappy and"
            + " zstd codecs out): use gzip or none, or the full archive, got "
            + value;
  }

  private static boolean onClassPath(String className) {
    try {
      Class.forName(className, false, ProducerProperties.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Checks a known property's type and range as the Kafka client would, without connecting. */
  private static String typeProblem(String name, String value) {
    ConfigDef.ConfigKey key = DEFINITION.configKeys().get(name);
    if (key == null) {
      return null; // unknown to the producer: plug-in settings (interceptors...) pass through
    }
    try {
      Object parsed = ConfigDef.parseType(name, value, key.type);
      if (key.validator != null) {
        key.validator.ensureValid(name, parsed);
      }
      return null;
    } catch (ConfigException | IllegalArgumentException e) {
      return isSecret(name)
          ? "invalid value (hidden) for a " + key.type.name().toLowerCase(Locale.ROOT) + " property"
          : "invalid value '" + value + "': " + withoutPrefix(name, e.getMessage());
    }
  }

  /** Kafka's messages repeat the value and the name: "Invalid value x for configuration y: ...". */
  private static String withoutPrefix(String name, String message) {
    String prefix = "for configuration " + name + ": ";
    int at = message == null ? -1 : message.indexOf(prefix);
    return at < 0 ? String.valueOf(message) : message.substring(at + prefix.length());
  }

  private static void timeoutProblems(
      SettingsReader r, Map<String, String> producer, Duration sendTimeout) {
    long send = sendTimeout.toMillis();
    Long linger = number(LINGER, producer.getOrDefault(LINGER, clientDefault(LINGER)));
    Long delivery = number(DELIVERY_TIMEOUT, producer.getOrDefault(DELIVERY_TIMEOUT, "" + send));
    boolean requestSet = producer.containsKey(REQUEST_TIMEOUT);
    Long request = number(REQUEST_TIMEOUT, producer.get(REQUEST_TIMEOUT));
    if (delivery != null && delivery > send) {
      r.problem(
          "producer." + DELIVERY_TIMEOUT,
          "must not exceed send-timeout ("
              + send
              + " ms): a batch is given up after send-timeout, got "
              + delivery
              + " ms");
    }
    if (linger == null || delivery == null || (requestSet && request == null)) {
      return; // typeProblem reports the unparsable one
    }
    if (!requestSet && delivery - linger < 1) {
      r.problem(
          "send-timeout",
          "must be longer than producer linger.ms (" + linger + " ms), got " + delivery + " ms");
    } else if (requestSet && delivery < linger + request) {
      r.problem(
          producer.containsKey(DELIVERY_TIMEOUT) ? "producer." + DELIVERY_TIMEOUT : "send-timeout",
          "must be at least linger.ms + request.timeout.ms ("
              + linger
              + " + "
              + request
              + " ms), got "
              + delivery
              + " ms");
    }
  }

  /**
   * The Kafka client's own default of {@code name}: the relay's defaults are in reference.conf's
   * {@code producer} block, so this is what applies only where a test builds settings without it.
   */
  private static String clientDefault(String name) {
    return String.valueOf(DEFINITION.defaultValues().get(name));
  }

  /** The value of a numeric property, or {@code null} when it is not a number. */
  private static Long number(String name, String value) {
    if (value == null) {
      return null;
    }
    try {
      return Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      return null; // typeProblem reports it
    }
  }

  /**
   * The producer's effective configuration: the {@code producer} properties (reference.conf's
   * defaults with the user's on top), derived timeouts, then what the relay owns.
   */
  static Map<String, Object> producerConfig(KafkaSinkSettings settings, String pipeline) {
    Map<String, Object> config = new HashMap<>(settings.producer());
    config.putIfAbsent(LINGER, clientDefault(LINGER));
    long send = settings.sendTimeout().toMillis();
    config.putIfAbsent(DELIVERY_TIMEOUT, String.valueOf(send));
    // Metadata waits end before the batch's send-timeout, leaving time to ask the broker whether a
    // topic the producer could not find is really missing (TopicCheck, bounded by probe-timeout).
    long check = Math.min(settings.probeTimeout().toMillis(), send / 2);
    config.putIfAbsent(MAX_BLOCK, String.valueOf(Math.max(1, send - check)));
    long linger = Long.parseLong(config.get(LINGER).toString().strip());
    long delivery = Long.parseLong(config.get(DELIVERY_TIMEOUT).toString().strip());
    // The client requires delivery.timeout.ms >= linger.ms + request.timeout.ms.
    config.putIfAbsent(
        REQUEST_TIMEOUT,
        String.valueOf(Math.max(1, Math.min(DEFAULT_REQUEST_TIMEOUT_MS, delivery - linger))));
    config.putIfAbsent(CLIENT_ID, "outbox-relay-" + pipeline);
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
    config.put(IDEMPOTENCE, "true");
    config.put(ACKS, "all");
    config.remove(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG);
    config.remove(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG);
    return config;
  }

  /**
   * A lane's transactional producer configuration (exactly once): {@code transactional.id} {@code
   * id}, the client id suffixed with the lane, and a transaction timeout.
   */
  static Map<String, Object> laneConfig(
      Map<String, Object> producerConfig, String id, int lane, Duration sendTimeout) {
    Map<String, Object> c = new java.util.HashMap<>(producerConfig);
    c.put("transactional.id", id);
    c.put(ProducerProperties.CLIENT_ID, c.get(ProducerProperties.CLIENT_ID) + "-lane-" + lane);
    // Longer than one batch may take, so the coordinator never aborts a transaction in progress;
    // short enough that a dead instance's open transaction does not block readers for long.
    c.putIfAbsent(
        "transaction.timeout.ms", String.valueOf(Math.max(60_000, sendTimeout.toMillis() * 2)));
    return Map.copyOf(c);
  }

  /**
   * The probe's admin client configuration: the producer's connection and security settings, with
   * timeouts bounded by {@code probeTimeout}.
   */
  static Map<String, Object> adminConfig(
      Map<String, Object> producerConfig, Duration probeTimeout) {
    Set<String> adminNames = AdminClientConfig.configNames();
    Map<String, Object> config = new HashMap<>();
    producerConfig.forEach(
        (name, value) -> {
          if (adminNames.contains(name) && !PROBE_OWNED.contains(name)) {
            config.put(name, value);
          }
        });
    String timeout =
        String.valueOf(Math.max(1, Math.min(Integer.MAX_VALUE, probeTimeout.toMillis())));
    config.put(CLIENT_ID, producerConfig.get(CLIENT_ID) + "-probe");
    config.put(REQUEST_TIMEOUT, timeout);
    config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeout);
    return config;
  }

  /** A copy fit for logs: values of secret-looking properties replaced. */
  static Map<String, String> masked(Map<String, ?> properties) {
    Map<String, String> out = new TreeMap<>();
    properties.forEach((k, v) -> out.put(k, isSecret(k) ? "******" : String.valueOf(v)));
    return out;
  }

  /**
   * Certificates the client declares as type PASSWORD (so that it never logs PEM values) although
   * they are public: a trust store's CA certificates and the client's own certificate chain.
   */
  static final Set<String> PUBLIC_CERTIFICATES =
      Set.of(
          SslConfigs.SSL_TRUSTSTORE_CERTIFICATES_CONFIG,
          SslConfigs.SSL_KEYSTORE_CERTIFICATE_CHAIN_CONFIG);

  /**
   * Whether the producer property {@code name} holds a secret, as the Kafka client declares it
   * (type PASSWORD, less {@link #PUBLIC_CERTIFICATES}); UNKNOWN for a property it does not declare.
   */
  static SecretKeys.Answer secret(String name) {
    ConfigDef.ConfigKey key = DEFINITION.configKeys().get(name);
    if (key == null) {
      return SecretKeys.Answer.UNKNOWN;
    }
    return key.type == ConfigDef.Type.PASSWORD && !PUBLIC_CERTIFICATES.contains(name)
        ? SecretKeys.Answer.SECRET
        : SecretKeys.Answer.NOT_SECRET;
  }

  /** For the sink's own logs and messages: declared secrets, and any name that sounds secret. */
  static boolean isSecret(String name) {
    ConfigDef.ConfigKey key = DEFINITION.configKeys().get(name);
    if (key != null && key.type == ConfigDef.Type.PASSWORD) {
      return true;
    }
    String n = name.toLowerCase(Locale.ROOT);
    return n.contains("password")
        || n.contains("jaas")
        || n.contains("secret")
        || n.contains("token")
        || n.contains("credential")
        || n.endsWith(".key");
  }
}
