package io.outbox.sink.rabbitmq;

import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
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
 * The RabbitMQ sink's settings, {@code sink.rabbitmq.*}, as {@link #read} reads them: each
 * component is the key of the same name in kebab case; what a key means and its default are written
 * once, in this module's {@code reference.conf}.
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
   * Reads {@code sink.rabbitmq}, each key once: the settings, or {@code null} with every problem in
   * {@code r} (full key path, the bad value, never a password), without connecting.
   */
  public static RabbitSinkSettings read(SettingsReader r) {
    String uri = r.checked("uri", RabbitSinkSettings::uriProblem);
    String routingKey = r.checked("routing-key", k -> first(EventTemplate.problems(k)));
    Duration confirmTimeout = r.positiveDuration("confirm-timeout");
    Duration connectionTimeout = r.positiveDuration("connection-timeout");
    Duration heartbeat = r.duration("heartbeat", Duration.ZERO);
    if (heartbeat != null && heartbeat.getSeconds() > 65535) {
      r.problem("heartbeat", "must be between 0s (off) and 65535s, not " + r.describe("heartbeat"));
    }
    Integer maxUnconfirmed = r.intIn("max-unconfirmed", 1, 1_000_000);
    Integer channels = r.intIn("channels", 1, 256);
    Boolean checkExchanges = r.bool("check-exchanges");
    String trustStore =
        r.checked(
            "trust-store",
            t ->
                t.isBlank() || Files.isReadable(Path.of(t))
                    ? null
                    : "no readable file at \"" + t + "\"");
    String trustStorePassword = r.string("trust-store-password");
    String password = r.optionalString("password");
    Map<String, Exchange> declare = declare(r);
    return r.ok()
        ? new RabbitSinkSettings(
            uri,
            routingKey,
            confirmTimeout,
            maxUnconfirmed,
            channels,
            connectionTimeout,
            heartbeat,
            declare,
            checkExchanges,
            trustStore,
            trustStorePassword,
            password)
        : null;
  }

  private static String first(List<String> reasons) {
    return reasons.isEmpty() ? null : reasons.get(0);
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

  /** {@code declare}, each exchange over {@code exchange-defaults}. */
  private static Map<String, Exchange> declare(SettingsReader r) {
    Boolean durable = r.bool("exchange-defaults.durable");
    Boolean autoDelete = r.bool("exchange-defaults.auto-delete");
    if (!(r.raw("declare") instanceof ConfigObject exchanges)) {
      r.problem(
          "declare",
          "must be an object of exchanges such as { \"outbox.order\" { type = topic } }, not "
              + r.describe("declare"));
      return null;
    }
    Map<String, Exchange> declare = new TreeMap<>();
    for (Map.Entry<String, ConfigValue> entry : exchanges.entrySet()) {
      String name = entry.getKey();
      String key = "declare." + ConfigUtil.joinPath(name);
      if (name.isEmpty() || RabbitMessages.tooLong(name)) {
        r.problem(key, "an exchange name must have 1..255 bytes");
      }
      if (!(entry.getValue() instanceof ConfigObject exchange)) {
        r.problem(
            key,
            "must be an object such as { type = topic, durable = true }, not " + r.describe(key));
        continue;
      }
      for (String k : exchange.keySet()) {
        if (!EXCHANGE_KEYS.contains(k)) {
          r.problem(
              key + "." + ConfigUtil.joinPath(k),
              "unknown key; an exchange has type, durable and auto-delete (quote names with dots:"
                  + " declare { \"outbox.order\" { type = topic } })");
        }
      }
      String type =
          r.checked(
              key + ".type",
              t ->
                  EXCHANGE_TYPES.contains(t) || t.startsWith("x-")
                      ? null
                      : "must be direct, fanout, topic, headers or a plug-in's x-... type, not \""
                          + t
                          + "\"");
      Boolean d = exchange.containsKey("durable") ? r.bool(key + ".durable") : durable;
      Boolean a = exchange.containsKey("auto-delete") ? r.bool(key + ".auto-delete") : autoDelete;
      if (type != null && d != null && a != null) {
        declare.put(name, new Exchange(name, type, d, a));
      }
    }
    return declare;
  }
}
