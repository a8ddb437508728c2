package io.outbox.sink.nats;

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
 * The NATS JetStream sink's settings, {@code sink.nats.*}; every default and its meaning is in this
 * module's {@code reference.conf}.
 *
 * @param servers {@code url}, split at commas: {@code nats://} or {@code tls://} URLs, possibly
 *     with a user and password, so they are only ever shown through {@link #maskedServers()}
 * @param token {@code token}: an authentication token, or {@code null}; never shown
 * @param publishTimeout {@code publish-timeout}: the bound on one published batch
 * @param maxPending {@code max-pending}: the most unacknowledged publishes of the sink
 * @param connectionTimeout {@code connection-timeout}: connecting and management requests
 * @param stream {@code stream}: the stream to declare, or {@code null} for none
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
   * Reads valid settings (see {@link #validate}).
   *
   * @throws IllegalArgumentException listing every problem
   */
  public static NatsSinkSettings from(PluginContext context) {
    Config c = SettingsReader.valid(context, validate(context), "NATS sink");
    Config s = c.getConfig("stream");
    Stream stream =
        s.getString("name").isEmpty()
            ? null
            : new Stream(
                s.getString("name"),
                s.getStringList("subjects"),
                s.getString("storage").equals("memory"),
                s.getDuration("duplicate-window"),
                s.getDuration("max-age"),
                s.getInt("replicas"));
    return new NatsSinkSettings(
        BrokerUrls.split(c.getString("url")),
        SettingsReader.stringOrNull(c, "token"),
        c.getDuration("publish-timeout"),
        c.getInt("max-pending"),
        c.getDuration("connection-timeout"),
        stream);
  }

  /**
   * Every problem of {@code sink.nats}, each with its full key path and the bad value (never a
   * password or token), without connecting to NATS.
   */
  public static List<SettingsProblem> validate(PluginContext context) {
    SettingsReader read = new SettingsReader(context);
    read.urls("url", NatsSinkSettings::urlProblem);
    read.optionalString("token");
    read.duration("publish-timeout", Duration.ofMillis(1), false);
    read.duration("connection-timeout", Duration.ofMillis(1), false);
    read.intBetween("max-pending", 1, 1_000_000);
    String name = read.string("stream.name");
    if (name != null && !name.isEmpty()) {
      if (!name.matches("[A-Za-z0-9_-]+")) {
        read.problem(
            "stream.name",
            "must use only letters, digits, _ and - (no dots, spaces or wildcards), got "
                + read.raw("stream.name"));
      }
      read.names("stream.subjects", "subject", "[\"outbox.>\"]");
      read.oneOf("stream.storage", "file", "memory");
      read.duration("stream.duplicate-window", Duration.ofMillis(1), false);
      read.duration("stream.max-age", Duration.ZERO, true);
      read.intBetween("stream.replicas", 1, 5);
    }
    return read.problems();
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
