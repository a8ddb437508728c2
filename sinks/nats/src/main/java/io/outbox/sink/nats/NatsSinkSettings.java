package io.outbox.sink.nats;

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
 * The NATS JetStream sink's settings, {@code sink.nats.*}, as {@link #read} reads them: each
 * component is the key of the same name in kebab case; what a key means and its default are written
 * once, in this module's {@code reference.conf}.
 */
public record NatsSinkSettings(
    List<String> servers,
    String token,
    Duration publishTimeout,
    int maxPending,
    Duration connectionTimeout,
    Stream stream) {

  private static final List<String> SCHEMES = List.of("nats", "tls", "ws", "wss");

  /**
   * A stream the sink declares when it is missing.
   *
   * @param name the stream's name
   * @param subjects the subjects it binds
   * @param memory whether it is stored in memory ({@code storage = memory}) rather than in files
   * @param duplicateWindow how long the stream remembers a {@code Nats-Msg-Id}
   * @param maxAge how long messages are kept, {@link Duration#ZERO} for ever
   * @param replicas copies in a cluster
   */
  public record Stream(
      String name,
      List<String> subjects,
      boolean memory,
      Duration duplicateWindow,
      Duration maxAge,
      int replicas) {
    public Stream {
      Objects.requireNonNull(name, "name");
      subjects = List.copyOf(subjects);
    }
  }

  public NatsSinkSettings {
    servers = List.copyOf(servers);
    Objects.requireNonNull(publishTimeout, "publishTimeout");
    Objects.requireNonNull(connectionTimeout, "connectionTimeout");
  }

  /**
   * Reads {@code sink.nats}, each key once: the settings, or {@code null} with every problem in
   * {@code r} (full key path, the bad value, never a password or token), without connecting.
   */
  public static NatsSinkSettings read(SettingsReader r) {
    List<String> servers = r.urls("url", NatsSinkSettings::urlProblem);
    String token = r.optionalString("token");
    Duration publishTimeout = r.positiveDuration("publish-timeout");
    Duration connectionTimeout = r.positiveDuration("connection-timeout");
    Integer maxPending = r.intIn("max-pending", 1, 1_000_000);
    Stream stream = stream(r);
    return r.ok()
        ? new NatsSinkSettings(
            servers, token, publishTimeout, maxPending, connectionTimeout, stream)
        : null;
  }

  /**
   * {@code stream.*}: {@code null} when {@code stream.name} is empty (no stream declared). Every
   * key is checked either way: a bad value is a mistake even where nothing is declared with it.
   */
  private static Stream stream(SettingsReader r) {
    String name = r.string("stream.name");
    if (name != null && !name.isEmpty() && !name.matches("[A-Za-z0-9_-]+")) {
      r.problem(
          "stream.name",
          "must use only letters, digits, _ and - (no dots, spaces or wildcards), not "
              + r.describe("stream.name"));
    }
    List<String> subjects = r.names("stream.subjects", "subject", "[\"outbox.>\"]");
    String storage = r.oneOf("stream.storage", "file", "memory");
    Duration duplicateWindow = r.positiveDuration("stream.duplicate-window");
    Duration maxAge = r.duration("stream.max-age", Duration.ZERO);
    Integer replicas = r.intIn("stream.replicas", 1, 5);
    return r.ok() && name != null && !name.isEmpty()
        ? new Stream(name, subjects, "memory".equals(storage), duplicateWindow, maxAge, replicas)
        : null;
  }

  /** The server URLs with any password replaced by {@code ****}, for messages and logs. */
  public List<String> maskedServers() {
    return servers.stream().map(url -> BrokerUrls.mask(url, true)).toList();
  }

  /** Hides the URLs' passwords and the token. */
  @Override
  public String toString() {
    return SettingsText.of(
        this, Map.of("servers", maskedServers(), "token", SettingsText.secret(token, "none")));
  }

  /** {@code null} when {@code url} is a usable server URL; the reason never shows a secret. */
  static String urlProblem(String url) {
    String shown = "\"" + BrokerUrls.mask(url, true) + "\"";
    URI parsed;
    try {
      parsed = new URI(url.contains("://") ? url : "nats://" + url);
    } catch (URISyntaxException e) {
      return "is not a valid URL: " + shown;
    }
    String problem = BrokerUrls.schemeOrHostProblem(parsed, SCHEMES, "nats://host:4222", shown);
    if (problem != null) {
      return problem;
    }
    String userInfo = parsed.getRawUserInfo();
    if (userInfo != null && !userInfo.contains(":")) {
      // The relay shows URLs with their passwords hidden; a bare token would be shown as written.
      return "holds a token in its user info (nats://TOKEN@host), which would be shown: set"
          + " token = ... (or token-file) instead, got "
          + "\""
          + parsed.getScheme()
          + "://****@"
          + parsed.getHost()
          + "\"";
    }
    return null;
  }
}
