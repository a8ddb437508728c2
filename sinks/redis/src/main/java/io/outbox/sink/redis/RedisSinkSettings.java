package io.outbox.sink.redis;

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
 * The Redis Streams sink's settings, {@code sink.redis.*}, as {@link #read} reads them: each
 * component is the key of the same name in kebab case; what a key means and its default are written
 * once, in this module's {@code reference.conf}.
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
   * Reads {@code sink.redis}, each key once: the settings, or {@code null} with every problem in
   * {@code r} (full key path, the bad value, never a password), without connecting.
   */
  public static RedisSinkSettings read(SettingsReader r) {
    String uri = r.checked("uri", RedisSinkSettings::uriProblem);
    String password = r.optionalString("password");
    Duration timeout = r.positiveDuration("timeout");
    Duration dedupWindow = r.duration("dedup-window", Duration.ZERO);
    Integer maxLen = r.intIn("max-len", 0, Integer.MAX_VALUE);
    Integer connections = r.intIn("connections", 1, 256);
    Integer waitReplicas = r.intIn("wait-replicas", 0, 64);
    Duration waitTimeout = r.positiveDuration("wait-timeout");
    if (waitTimeout != null && timeout != null && waitTimeout.compareTo(timeout) >= 0) {
      r.problem(
          "wait-timeout",
          "must be shorter than timeout ("
              + timeout.toMillis()
              + " ms): a batch's WAIT would outlast the batch, not "
              + r.describe("wait-timeout"));
    }
    String prefix = r.string("dedup-key-prefix");
    if (prefix != null && prefix.isEmpty()) {
      r.problem("dedup-key-prefix", "must not be empty (the markers would mix with other keys)");
    }
    return r.ok()
        ? new RedisSinkSettings(
            uri,
            password,
            timeout,
            maxLen,
            dedupWindow,
            prefix,
            connections,
            waitReplicas,
            waitTimeout)
        : null;
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
