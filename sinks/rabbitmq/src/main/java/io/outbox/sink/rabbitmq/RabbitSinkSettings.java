package io.outbox.sink.rabbitmq;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.outbox.relay.spi.EventTemplate;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

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
  private static final Pattern USERINFO = Pattern.compile("^([a-zA-Z][a-zA-Z0-9+.-]*://)[^@/]*@");

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
    List<SettingsProblem> problems = validate(context);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("invalid RabbitMQ sink settings: " + problems);
    }
    Config c = context.settings();
    Map<String, Exchange> declare = new TreeMap<>();
    ConfigObject exchanges = c.getObject("declare");
    for (String name : exchanges.keySet()) {
      Config e = exchanges.toConfig().getConfig(ConfigUtil.joinPath(name));
      declare.put(
          name,
          new Exchange(
              name,
              e.getString("type"),
              !e.hasPath("durable") || e.getBoolean("durable"),
              e.hasPath("auto-delete") && e.getBoolean("auto-delete")));
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
        c.hasPath("password") ? c.getString("password") : null);
  }

  /**
   * Every problem of {@code sink.rabbitmq}, each with its full key path and the bad value (never a
   * password), without connecting to RabbitMQ.
   */
  public static List<SettingsProblem> validate(PluginContext context) {
    List<SettingsProblem> problems = new ArrayList<>();
    String uri = string(context, "uri", problems);
    if (uri != null) {
      String reason = uriProblem(uri);
      if (reason != null) {
        problems.add(problem(context, "uri", reason));
      }
    }
    String routingKey = string(context, "routing-key", problems);
    if (routingKey != null) {
      List<String> reasons = EventTemplate.problems(routingKey);
      if (!reasons.isEmpty()) {
        problems.add(problem(context, "routing-key", reasons.get(0)));
      }
    }
    positiveDuration(context, "confirm-timeout", problems);
    positiveDuration(context, "connection-timeout", problems);
    Duration heartbeat = duration(context, "heartbeat", problems);
    if (heartbeat != null && (heartbeat.isNegative() || heartbeat.getSeconds() > 65535)) {
      problems.add(
          problem(
              context,
              "heartbeat",
              "must be between 0s (off) and 65535s, got " + heartbeat.toMillis() + "ms"));
    }
    intInRange(context, "max-unconfirmed", 1, 1_000_000, problems);
    intInRange(context, "channels", 1, 256, problems);
    booleanValue(context, "check-exchanges", problems);
    String trustStore = string(context, "trust-store", problems);
    if (trustStore != null && !trustStore.isBlank() && !Files.isReadable(Path.of(trustStore))) {
      problems.add(problem(context, "trust-store", "no readable file at \"" + trustStore + "\""));
    }
    string(context, "trust-store-password", problems);
    if (context.settings().hasPath("password")) {
      string(context, "password", problems);
    }
    validateDeclare(context, problems);
    return List.copyOf(problems);
  }

  /** {@link #uri()} with the password of its user info replaced by {@code ****}. */
  public String maskedUri() {
    return mask(uri);
  }

  /** {@code uri} with any user info reduced to the user name and {@code ****}. */
  static String mask(String uri) {
    var m = USERINFO.matcher(uri);
    if (!m.find()) {
      return uri;
    }
    String userInfo = uri.substring(m.end(1), m.end() - 1);
    int colon = userInfo.indexOf(':');
    String user = colon < 0 ? userInfo : userInfo.substring(0, colon);
    return m.group(1) + user + ":****@" + uri.substring(m.end());
  }

  /** Hides the URI's password and the trust store password. */
  @Override
  public String toString() {
    return "RabbitSinkSettings[uri="
        + maskedUri()
        + ", routingKey="
        + routingKey
        + ", confirmTimeout="
        + confirmTimeout
        + ", maxUnconfirmed="
        + maxUnconfirmed
        + ", channels="
        + channels
        + ", connectionTimeout="
        + connectionTimeout
        + ", heartbeat="
        + heartbeat
        + ", declare="
        + declare.values()
        + ", checkExchanges="
        + checkExchanges
        + ", trustStore="
        + trustStore
        + ", trustStorePassword="
        + (trustStorePassword.isEmpty() ? "" : "****")
        + ", password="
        + (password == null ? "<from uri>" : "****")
        + "]";
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
    String scheme = parsed.getScheme() == null ? "" : parsed.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("amqp") && !scheme.equals("amqps")) {
      return "must start with amqp:// or amqps://, got " + shown;
    }
    if (parsed.getHost() == null || parsed.getHost().isBlank()) {
      return "must name a host (amqp://user:password@host:5672/vhost), got " + shown;
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

  private static void validateDeclare(PluginContext context, List<SettingsProblem> problems) {
    Config c = context.settings();
    if (!c.hasPath("declare")) {
      problems.add(problem(context, "declare", "must be set to an object such as { }"));
      return;
    }
    if (c.getValue("declare").valueType() != ConfigValueType.OBJECT) {
      problems.add(
          problem(
              context,
              "declare",
              "must be an object of exchanges such as { \"outbox.order\" { type = topic } }, got "
                  + typeName(c.getValue("declare"))));
      return;
    }
    ConfigObject exchanges = c.getObject("declare");
    for (Map.Entry<String, ConfigValue> entry : exchanges.entrySet()) {
      String name = entry.getKey();
      String key = "declare." + ConfigUtil.joinPath(name);
      if (name.isEmpty() || RabbitMessages.tooLong(name)) {
        problems.add(problem(context, key, "an exchange name must have 1..255 bytes"));
      }
      if (entry.getValue().valueType() != ConfigValueType.OBJECT) {
        problems.add(
            problem(
                context,
                key,
                "must be an object such as { type = topic, durable = true }, got "
                    + typeName(entry.getValue())));
        continue;
      }
      ConfigObject exchange = (ConfigObject) entry.getValue();
      for (String k : exchange.keySet()) {
        if (!EXCHANGE_KEYS.contains(k)) {
          problems.add(
              problem(
                  context,
                  key + "." + ConfigUtil.joinPath(k),
                  "unknown key; an exchange has type, durable and auto-delete (quote names with dots:"
                      + " declare { \"outbox.order\" { type = topic } })"));
        }
      }
      Config e = exchange.toConfig();
      if (!e.hasPath("type")) {
        problems.add(
            problem(context, key + ".type", "must be set: direct, fanout, topic or headers"));
      } else {
        String type = null;
        try {
          type = e.getString("type");
        } catch (ConfigException ex) {
          // reported below
        }
        if (type == null || !(EXCHANGE_TYPES.contains(type) || type.startsWith("x-"))) {
          problems.add(
              problem(
                  context,
                  key + ".type",
                  "must be direct, fanout, topic, headers or a plug-in's x-... type, got "
                      + e.getValue("type").render()));
        }
      }
      for (String flag : List.of("durable", "auto-delete")) {
        if (e.hasPath(flag) && e.getValue(flag).valueType() != ConfigValueType.BOOLEAN) {
          try {
            e.getBoolean(flag); // "yes"/"true" strings are booleans to typesafe-config
          } catch (ConfigException ex) {
            problems.add(
                problem(
                    context,
                    key + "." + flag,
                    "must be true or false, got " + e.getValue(flag).render()));
          }
        }
      }
    }
  }

  private static String string(PluginContext context, String key, List<SettingsProblem> problems) {
    Config c = context.settings();
    try {
      return c.getString(key);
    } catch (ConfigException.Missing e) {
      problems.add(problem(context, key, "must be set"));
    } catch (ConfigException e) {
      problems.add(problem(context, key, "must be a string, got " + typeName(c.getValue(key))));
    }
    return null;
  }

  private static void booleanValue(
      PluginContext context, String key, List<SettingsProblem> problems) {
    Config c = context.settings();
    try {
      c.getBoolean(key);
    } catch (ConfigException.Missing e) {
      problems.add(problem(context, key, "must be set to true or false"));
    } catch (ConfigException e) {
      problems.add(problem(context, key, "must be true or false, got " + c.getValue(key).render()));
    }
  }

  private static void intInRange(
      PluginContext context, String key, int min, int max, List<SettingsProblem> problems) {
    Config c = context.settings();
    try {
      int v = c.getInt(key);
      if (v < min || v > max) {
        problems.add(
            problem(context, key, "must be between " + min + " and " + max + ", got " + v));
      }
    } catch (ConfigException.Missing e) {
      problems.add(problem(context, key, "must be set to a number"));
    } catch (ConfigException e) {
      problems.add(
          problem(context, key, "must be a whole number, got " + c.getValue(key).render()));
    }
  }

  private static Duration duration(
      PluginContext context, String key, List<SettingsProblem> problems) {
    Config c = context.settings();
    try {
      return c.getDuration(key);
    } catch (ConfigException.Missing e) {
      problems.add(problem(context, key, "must be set to a duration such as 30s"));
    } catch (ConfigException e) {
      problems.add(
          problem(
              context,
              key,
              "must be a duration such as 30s or 500ms, got " + c.getValue(key).render()));
    }
    return null;
  }

  private static void positiveDuration(
      PluginContext context, String key, List<SettingsProblem> problems) {
    Duration d = duration(context, key, problems);
    if (d != null && d.toMillis() < 1) {
      problems.add(
          problem(
              context,
              key,
              "must be a positive duration (at least 1ms), got " + d.toMillis() + "ms"));
    }
  }

  private static String typeName(ConfigValue v) {
    return v.valueType().name().toLowerCase(Locale.ROOT);
  }

  private static SettingsProblem problem(PluginContext context, String key, String message) {
    return new SettingsProblem(context.pathOf(key), message);
  }
}
