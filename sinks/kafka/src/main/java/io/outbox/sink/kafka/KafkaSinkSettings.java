package io.outbox.sink.kafka;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValueType;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.relay.spi.support.SettingsText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The Kafka sink's settings, {@code sink.kafka.*}; every default and its meaning is in this
 * module's {@code reference.conf}.
 *
 * @param bootstrapServers {@code bootstrap-servers}, normalized to {@code host:port,host:port}
 * @param producer {@code producer}: the user's raw producer properties, flattened to dotted names
 *     ({@code linger.ms}), values as strings; what the relay owns or defaults is added when the
 *     producer is created
 * @param sendTimeout {@code send-timeout}: the bound on one published batch
 * @param probeTimeout {@code probe-timeout}: the longest one probe may take
 * @param delivery {@code delivery}: at least once (an idempotent producer) or exactly once (one
 *     transaction per batch, with a ledger)
 * @param ledgerTopic {@code ledger.topic}, its default resolved: the ledger of an exactly-once
 *     pipeline
 * @param ledgerRetention {@code ledger.retention}: the {@code retention.ms} of a ledger topic the
 *     relay creates
 * @param transactionalIdPrefix {@code transactional-id-prefix}, its default resolved: lane n's
 *     producer has the transactional id {@code <prefix>.lane-<n>}
 */
public record KafkaSinkSettings(
    String bootstrapServers,
    Map<String, String> producer,
    Duration sendTimeout,
    Duration probeTimeout,
    Delivery delivery,
    String ledgerTopic,
    Duration ledgerRetention,
    String transactionalIdPrefix) {

  /** {@code sink.kafka.delivery}. */
  public enum Delivery {
    AT_LEAST_ONCE("at-least-once"),
    EXACTLY_ONCE("exactly-once");

    private final String text;

    Delivery(String text) {
      this.text = text;
    }

    /** As written in the configuration. */
    public String text() {
      return text;
    }

    static Delivery parse(String value) {
      for (Delivery d : values()) {
        if (d.text.equals(value)) {
          return d;
        }
      }
      return null;
    }
  }

  public KafkaSinkSettings {
    Objects.requireNonNull(bootstrapServers, "bootstrapServers");
    Objects.requireNonNull(sendTimeout, "sendTimeout");
    Objects.requireNonNull(probeTimeout, "probeTimeout");
    Objects.requireNonNull(delivery, "delivery");
    Objects.requireNonNull(ledgerTopic, "ledgerTopic");
    Objects.requireNonNull(ledgerRetention, "ledgerRetention");
    Objects.requireNonNull(transactionalIdPrefix, "transactionalIdPrefix");
    producer = Collections.unmodifiableMap(new TreeMap<>(producer == null ? Map.of() : producer));
  }

  /**
   * Reads valid settings (see {@link #validate}).
   *
   * @throws IllegalArgumentException listing every problem
   */
  public static KafkaSinkSettings from(PluginContext context) {
    Config c = SettingsReader.valid(context, validate(context), "Kafka sink");
    return new KafkaSinkSettings(
        String.join(",", servers(c)),
        ProducerProperties.flatten(c.getConfig("producer")),
        c.getDuration("send-timeout"),
        c.getDuration("probe-timeout"),
        Delivery.parse(c.getString("delivery")),
        ledgerTopic(context),
        c.getDuration("ledger.retention"),
        defaulted(context, "transactional-id-prefix", "outbox-relay." + context.pipeline()));
  }

  /** {@code ledger.topic}, or {@code outbox-relay.<pipeline>.ledger} when blank. */
  private static String ledgerTopic(PluginContext context) {
    return defaulted(context, "ledger.topic", "outbox-relay." + context.pipeline() + ".ledger");
  }

  /** The string at {@code key}, or {@code otherwise} when it is blank. */
  private static String defaulted(PluginContext context, String key, String otherwise) {
    String value = context.settings().getString(key).strip();
    return value.isEmpty() ? otherwise : value;
  }

  /**
   * Every problem of {@code sink.kafka}, each with its full key path and the bad value, without
   * connecting to Kafka.
   */
  public static List<SettingsProblem> validate(PluginContext context) {
    Config c = context.settings();
    List<SettingsProblem> problems = new ArrayList<>();
    validateServers(context, problems);
    Duration sendTimeout = positiveDuration(context, "send-timeout", problems);
    positiveDuration(context, "probe-timeout", problems);
    validateDelivery(context, problems);
    if (!c.hasPath("producer")) {
      problems.add(problem(context, "producer", "must be set to an object such as { }"));
    } else if (c.getValue("producer").valueType() != ConfigValueType.OBJECT) {
      problems.add(
          problem(
              context,
              "producer",
              "must be an object of producer properties such as { \"linger.ms\" = 10 }, got "
                  + c.getValue("producer").valueType().name().toLowerCase(java.util.Locale.ROOT)));
    } else {
      Map<String, String> producer = ProducerProperties.flatten(c.getConfig("producer"));
      problems.addAll(ProducerProperties.validate(context, producer, sendTimeout));
    }
    return List.copyOf(problems);
  }

  /** Hides values of properties that look secret (passwords, JAAS configs, keys, tokens). */
  @Override
  public String toString() {
    return SettingsText.of(
        this, Map.of("producer", ProducerProperties.masked(producer), "delivery", delivery.text()));
  }

  private static void validateDelivery(PluginContext context, List<SettingsProblem> problems) {
    Config c = context.settings();
    try {
      if (Delivery.parse(c.getString("delivery")) == null) {
        problems.add(
            problem(
                context,
                "delivery",
                "must be at-least-once or exactly-once, got " + c.getValue("delivery").render()));
      }
    } catch (ConfigException e) {
      problems.add(problem(context, "delivery", "must be at-least-once or exactly-once"));
    }
    try {
      String topic = ledgerTopic(context);
      String invalid = TopicNames.problem(topic);
      if (invalid != null) {
        problems.add(problem(context, "ledger.topic", invalid));
      }
    } catch (ConfigException e) {
      problems.add(problem(context, "ledger.topic", "must be a string (blank for the default)"));
    }
    positiveDuration(context, "ledger.retention", problems);
    try {
      defaulted(context, "transactional-id-prefix", "");
    } catch (ConfigException e) {
      problems.add(
          problem(context, "transactional-id-prefix", "must be a string (blank for the default)"));
    }
  }

  private static void validateServers(PluginContext context, List<SettingsProblem> problems) {
    String key = "bootstrap-servers";
    Config c = context.settings();
    List<String> servers;
    try {
      servers = servers(c);
    } catch (ConfigException.Missing e) {
      problems.add(problem(context, key, "must be set, e.g. \"127.0.0.1:9092\""));
      return;
    } catch (ConfigException e) {
      problems.add(
          problem(
              context,
              key,
              "must be a string \"host:port,host:port\" or a list of them, got "
                  + c.getValue(key).render()));
      return;
    }
    if (servers.isEmpty()) {
      problems.add(problem(context, key, "must name at least one host:port, got none"));
    }
    for (String server : servers) {
      String reason = hostPortProblem(server);
      if (reason != null) {
        problems.add(problem(context, key, "entry '" + server + "' " + reason));
      }
    }
  }

  private static List<String> servers(Config c) {
    List<String> raw =
        c.getValue("bootstrap-servers").valueType() == ConfigValueType.LIST
            ? c.getStringList("bootstrap-servers")
            : List.of(c.getString("bootstrap-servers").split(","));
    List<String> servers = new ArrayList<>();
    for (String s : raw) {
      if (!s.isBlank()) {
        servers.add(s.strip());
      }
    }
    return servers;
  }

  /** {@code null} when {@code server} is {@code host:port} with a port in 1..65535. */
  static String hostPortProblem(String server) {
    int colon = server.lastIndexOf(':');
    if (colon <= 0 || colon == server.length() - 1) {
      return "is not host:port";
    }
    String port = server.substring(colon + 1);
    if (!port.chars().allMatch(Character::isDigit) || port.length() > 5) {
      return "has a port that is not a number: '" + port + "'";
    }
    int p = Integer.parseInt(port);
    if (p < 1 || p > 65535) {
      return "has a port outside 1..65535: " + p;
    }
    return null;
  }

  private static Duration positiveDuration(
      PluginContext context, String key, List<SettingsProblem> problems) {
    Config c = context.settings();
    Duration d;
    try {
      d = c.getDuration(key);
    } catch (ConfigException.Missing e) {
      problems.add(problem(context, key, "must be set to a duration such as 30s"));
      return null;
    } catch (ConfigException e) {
      problems.add(
          problem(
              context,
              key,
              "must be a duration such as 30s or 500ms, got " + c.getValue(key).render()));
      return null;
    }
    if (d.toMillis() < 1) {
      problems.add(
          problem(
              context,
              key,
              "must be a positive duration (at least 1ms), got " + d.toMillis() + "ms"));
      return null;
    }
    return d;
  }

  private static SettingsProblem problem(PluginContext context, String key, String message) {
    return new SettingsProblem(context.pathOf(key), message);
  }
}
