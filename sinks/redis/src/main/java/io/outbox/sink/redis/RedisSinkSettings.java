package io.outbox.sink.redis;

import com.typesafe.config.Config;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.support.BrokerUrls;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.relay.spi.support.SettingsText;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The Redis Streams sink's settings, {@code sink.redis.*}; every default and its meaning is in this
 * module's {@code reference.conf}.
 *
 * @param uri {@code uri}: {@code redis://} or {@code rediss://[user:password@]host[:port][/db]};
 *     may hold a password, so it is only ever shown through {@link #maskedUri()}
 * @param password {@code password}: replaces the URI's password, or {@code null}; never shown
 * @param timeout {@code timeout}: connecting and every reply
 * @param maxLen {@code max-len}: {@code MAXLEN ~} of each XADD, 0 for none
 * @param dedupWindow {@code dedup-window}: how long a re-send is recognised, zero for never
 * @param dedupKeyPrefix {@code dedup-key-prefix}: the prefix of the marker keys
 * @param connections {@code connections}: the most connections of the sink
 * @param waitReplicas {@code wait-replicas}: replicas that must have each turn's entries ({@code
 *     WAIT}) before they count as published, 0 for none
 * @param waitTimeout {@code wait-timeout}: how long one {@code WAIT} waits for them
 */
public record RedisSinkSettings(
    String uri,
    String password,
    Duration timeout,
    long maxLen,
    Duration dedupWindow,
    String dedupKeyPrefix,
    int connections,
    int waitReplicas,
    Duration waitTimeout) {

  public RedisSinkSettings {
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(dedupWindow, "dedupWindow");
    Objects.requireNonNull(dedupKeyPrefix, "dedupKeyPrefix");
    Objects.requireNonNull(waitTimeout, "waitTimeout");
  }

  /**
   * Reads valid settings (see {@link #validate}).
   *
   * @throws IllegalArgumentException listing every problem
   */
  public static RedisSinkSettings from(PluginContext context) {
    Config c = SettingsReader.valid(context, validate(context), "Redis sink");
    return new RedisSinkSettings(
        c.getString("uri"),
        SettingsReader.stringOrNull(c, "password"),
        c.getDuration("timeout"),
        c.getLong("max-len"),
        c.getDuration("dedup-window"),
        c.getString("dedup-key-prefix"),
        c.getInt("connections"),
        c.getInt("wait-replicas"),
        c.getDuration("wait-timeout"));
  }

  /**
   * Every problem of {@code sink.redis}, each with its full key path and the bad value (never a
   * password), without connecting to Redis.
   */
  public static List<SettingsProblem> validate(PluginContext context) {
    SettingsReader read = new SettingsReader(context);
    read.checked("uri", RedisSinkSettings::uriProblem);
    read.optionalString("password");
    boolean timeoutOk = read.duration("timeout", Duration.ofMillis(1), false);
    read.duration("dedup-window", Duration.ofMillis(1), true);
    read.intBetween("max-len", 0, Integer.MAX_VALUE);
    read.intBetween("connections", 1, 256);
    read.intBetween("wait-replicas", 0, 64);
    if (read.duration("wait-timeout", Duration.ofMillis(1), false) && timeoutOk) {
      read.shorterThan("wait-timeout", "timeout", "a batch's WAIT would outlast the batch");
    }
    String prefix = read.string("dedup-key-prefix");
    if (prefix != null && prefix.isEmpty()) {
      read.problem("dedup-key-prefix", "must not be empty (the markers would mix with other keys)");
    }
    return read.problems();
  }

  /** The server's address, {@code host:port}, for messages. */
  String address() {
    URI u = URI.create(uri);
    return u.getHost() + ":" + port();
  }

  String host() {
    return URI.create(uri).getHost();
  }

  int port() {
    int port = URI.create(uri).getPort();
    return port == -1 ? 6379 : port;
  }

  boolean tls() {
    return URI.create(uri).getScheme().equalsIgnoreCase("rediss");
  }

  /** The URI's user name, or {@code null} for the default user. */
  String user() {
    return BrokerUrls.user(URI.create(uri));
  }

  /** {@code password}, else the URI's password, else {@code null}. */
  String effectivePassword() {
    return password != null ? password : BrokerUrls.password(URI.create(uri));
  }

  /** The database number of the URI's path, 0 when it names none. */
  int database() {
    String path = URI.create(uri).getPath();
    return path == null || path.length() <= 1 ? 0 : Integer.parseInt(path.substring(1));
  }

  /** {@link #uri()} as {@code scheme://[user:****@]host:port/database}: never its password. */
  public String maskedUri() {
    URI u = URI.create(uri);
    String user = user();
    String secret = u.getUserInfo() == null ? "" : (user == null ? "" : user) + ":****@";
    return u.getScheme() + "://" + secret + address() + "/" + database();
  }

  /** Hides the URI's password and the password. */
  @Override
  public String toString() {
    return SettingsText.of(
        this, Map.of("uri", maskedUri(), "password", SettingsText.secret(password, "<from uri>")));
  }

  /** {@code null} when {@code uri} is usable; the reason never shows a password. */
  static String uriProblem(String uri) {
    URI parsed;
    try {
      parsed = new URI(uri);
    } catch (URISyntaxException e) {
      // Where the parser stopped, not the text: the text may hold a password.
      return "is not a valid URI (" + e.getReason() + " at index " + e.getIndex() + ")";
    }
    String shown =
        "\""
            + parsed.getScheme()
            + "://"
            + (parsed.getUserInfo() == null ? "" : "...@")
            + parsed.getHost()
            + (parsed.getPort() == -1 ? "" : ":" + parsed.getPort())
            + (parsed.getPath() == null ? "" : parsed.getPath())
            + "\"";
    String problem =
        BrokerUrls.schemeOrHostProblem(
            parsed, List.of("redis", "rediss"), "redis://host:6379", shown);
    if (problem != null) {
      return problem;
    }
    String path = parsed.getPath();
    if (path != null && path.length() > 1 && !path.substring(1).matches("\\d{1,5}")) {
      return "may only name a database number as its path (redis://host:6379/0), got " + shown;
    }
    return null;
  }
}
