package io.outbox.sink.rabbitmq;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.support.BrokerUrls;
import io.outbox.relay.spi.support.EventTemplate;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.relay.spi.support.SettingsText;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The RabbitMQ sink's settings, {@code sink.rabbitmq.*}; every default and its meaning is in this
 * module's {@code reference.conf}.
 *
 * @param uri {@code uri}: {@code amqp://} or {@code amqps://user:password@host:port/vhost}; may
 *     hold a password, so it is only ever shown through {@link #maskedUri()}
 * @param routingKey {@code routing-key}: the routing key template
 * @param confirmTimeout {@code confirm-timeout}: the bound on one published batch
 * @param maxUnconfirmed {@code max-unconfirmed}: the most unconfirmed messages per channel
 * @param channels {@code channels}: the most publishing channels on the one connection
 * @param connectionTimeout {@code connection-timeout}: TCP connect, handshake and channel RPCs
 * @param heartbeat {@code heartbeat}: AMQP heartbeat, {@link Duration#ZERO} to disable
 * @param declare {@code declare}: exchanges declared on every connect, by name
 * @param checkExchanges {@code check-exchanges}: whether each exchange is checked passively before
 *     the first publish to it on a connection
 * @param trustStore {@code trust-store}: a trust store file for {@code amqps}, or empty for the
 *     JVM's default trust store
 * @param trustStorePassword {@code trust-store-password}: its password, or empty
 * @param password {@code password}: the broker password, replacing the one in the URI's user info,
 *     or {@code null} to use the URI's; never shown
 */
public record RabbitSinkSettings(
    String uri,
    String routingKey,
    Duration confirmTimeout,
    int maxUnconfirmed,
    int channels,
    Duration connectionTimeout,
    Duration heartbeat,
    Map<String, Exchange> declare,
    boolean checkExchanges,
    String trustStore,
    String trustStorePassword,
    String password) {

  /** The exchange types RabbitMQ ships; plug-in types start with {@code x-}. */
  static final Set<String> EXCHANGE_TYPES = Set.of("direct", "fanout", "topic", "headers");

  private static final Set<String> EXCHANGE_KEYS = Set.of("type", "durable", "auto-delete");

  /**
   * An exchange to declare.
   *
   * @param name the exchange name
   * @param type {@code direct}, {@code fanout}, {@code topic}, {@code headers} or a plug-in's
   *     {@code x-...}
   * @param durable whether it survives a broker restart
   * @param autoDelete whether the broker deletes it when its last binding goes
   */
  public record Exchange(String name, String type, boolean durable, boolean autoDelete) {
    public Exchange {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(type, "type");
    }
  }

  public RabbitSinkSettings {
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(routingKey, "routingKey");
    Objects.requireNonNull(confirmTimeout, "confirmTimeout");
    Objects.requireNonNull(connectionTimeout, "connectionTimeout");
    Objects.requireNonNull(heartbeat, "heartbeat");
    declare = Collections.unmodifiableMap(new TreeMap<>(declare == null ? Map.of() : declare));
    trustStore = trustStore == null ? "" : trustStore;
    trustStorePassword = trustStorePassword == null ? "" : trustStorePassword;
  }

  /**
   * Reads valid settings (see {@link #validate}).
   *
   * @throws IllegalArgumentException listing every problem
   */
  public static RabbitSinkSettings from(PluginContext context) {
    Config c = SettingsReader.valid(context, validate(context), "RabbitMQ sink");
    Map<String, Exchange> declare = new TreeMap<>();
    ConfigObject exchanges = c.getObject("declare");
    for (String name : exchanges.keySet()) {
      Config e =
          exchanges
              .toConfig()
              .getConfig(ConfigUtil.joinPath(name))
              .withFallback(c.getConfig("exchange-defaults"));
      declare.put(
          name,
          new Exchange(
              name, e.getString("type"), e.getBoolean("durable"), e.getBoolean("auto-delete")));
    }
    return new RabbitSinkSettings(
        c.getString("uri"),
        c.getString("routing-key"),
        c.getDuration("confirm-timeout"),
        c.getInt("max-unconfirmed"),
        c.getInt("channels"),
        c.getDuration("connection-timeout"),
        c.getDuration("heartbeat"),
        declare,
        c.getBoolean("check-exchanges"),
        c.getString("trust-store"),
        c.getString("trust-store-password"),
        SettingsReader.stringOrNull(c, "password"));
  }

  /**
   * Every problem of {@code sink.rabbitmq}, each with its full key path and the bad value (never a
   * password), without connecting to RabbitMQ.
   */
  public static List<SettingsProblem> validate(PluginContext context) {
    SettingsReader read = new SettingsReader(context);
    read.checked("uri", RabbitSinkSettings::uriProblem);
    String routingKey = read.string("routing-key");
    if (routingKey != null) {
      List<String> reasons = EventTemplate.problems(routingKey);
      if (!reasons.isEmpty()) {
        read.problem("routing-key", reasons.get(0));
      }
    }
    read.duration("confirm-timeout", Duration.ofMillis(1), false);
    read.duration("connection-timeout", Duration.ofMillis(1), false);
    if (read.duration("heartbeat", Duration.ZERO, true)
        && context.settings().getDuration("heartbeat").getSeconds() > 65535) {
      read.problem(
          "heartbeat", "must be between 0s (off) and 65535s, got " + read.raw("heartbeat"));
    }
    read.intBetween("max-unconfirmed", 1, 1_000_000);
    read.intBetween("channels", 1, 256);
    read.bool("check-exchanges");
    String trustStore = read.string("trust-store");
    if (trustStore != null && !trustStore.isBlank() && !Files.isReadable(Path.of(trustStore))) {
      read.problem("trust-store", "no readable file at \"" + trustStore + "\"");
    }
    read.string("trust-store-password");
    read.optionalString("password");
    read.bool("exchange-defaults.durable");
    read.bool("exchange-defaults.auto-delete");
    validateDeclare(read, context.settings());
    return read.problems();
  }

  /** {@link #uri()} with the password of its user info replaced by {@code ****}. */
  public String maskedUri() {
    return mask(uri);
  }

  /** {@code uri} with any user info reduced to the user name and {@code ****}. */
  static String mask(String uri) {
    return BrokerUrls.mask(uri, false);
  }

  /** Hides the URI's password and the trust store password. */
  @Override
  public String toString() {
    return SettingsText.of(
        this,
        Map.of(
            "uri", maskedUri(),
            "declare", declare.values(),
            "trustStorePassword", trustStorePassword.isEmpty() ? "" : "****",
            "password", SettingsText.secret(password, "<from uri>")));
  }

  /**
   * {@code null} when {@code uri} is a usable amqp/amqps URI; the reason never shows a password.
   */
  static String uriProblem(String uri) {
    String shown = "\"" + mask(uri) + "\"";
    URI parsed;
    try {
      parsed = new URI(uri);
    } catch (java.net.URISyntaxException e) {
      return "is not a valid URI: " + shown;
    }
    String problem =
        BrokerUrls.schemeOrHostProblem(
            parsed, List.of("amqp", "amqps"), "amqp://user:password@host:5672/vhost", shown);
    if (problem != null) {
      return problem;
    }
    if (parsed.getPort() != -1 && (parsed.getPort() < 1 || parsed.getPort() > 65535)) {
      return "has a port outside 1..65535: " + parsed.getPort();
    }
    String path = parsed.getRawPath();
    if (path != null && path.length() > 1 && path.indexOf('/', 1) >= 0) {
      return "has more than one path segment (the vhost; write / as %2f), got " + shown;
    }
    return null;
  }

  private static void validateDeclare(SettingsReader read, Config c) {
    if (!c.hasPath("declare")) {
      read.problem("declare", "must be set to an object such as { }");
      return;
    }
    if (c.getValue("declare").valueType() != ConfigValueType.OBJECT) {
      read.problem(
          "declare",
          "must be an object of exchanges such as { \"outbox.order\" { type = topic } }, got "
              + read.raw("declare"));
      return;
    }
    for (Map.Entry<String, ConfigValue> entry : c.getObject("declare").entrySet()) {
      String name = entry.getKey();
      String key = "declare." + ConfigUtil.joinPath(name);
      if (name.isEmpty() || RabbitMessages.tooLong(name)) {
        read.problem(key, "an exchange name must have 1..255 bytes");
      }
      if (entry.getValue().valueType() != ConfigValueType.OBJECT) {
        read.problem(
            key,
            "must be an object such as { type = topic, durable = true }, got " + read.raw(key));
        continue;
      }
      for (String k : ((ConfigObject) entry.getValue()).keySet()) {
        if (!EXCHANGE_KEYS.contains(k)) {
          read.problem(
              key + "." + ConfigUtil.joinPath(k),
              "unknown key; an exchange has type, durable and auto-delete (quote names with dots:"
                  + " declare { \"outbox.order\" { type = topic } })");
        }
      }
      String type = read.string(key + ".type");
      if (type != null && !(EXCHANGE_TYPES.contains(type) || type.startsWith("x-"))) {
        read.problem(
            key + ".type",
            "must be direct, fanout, topic, headers or a plug-in's x-... type, got "
                + read.raw(key + ".type"));
      }
      for (String flag : List.of("durable", "auto-delete")) {
        if (c.hasPath(key + "." + flag)) {
          read.bool(key + "." + flag);
        }
      }
    }
  }
}
