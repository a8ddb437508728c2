package io.outbox.relay.spi.support;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A broker's URL in settings, messages and logs: the servers of a comma-separated list, its
 * password hidden, and the checks every broker URL needs (scheme, host), so that a sink's settings
 * check only adds what is particular to its broker.
 */
public final class BrokerUrls {

  private static final Pattern USERINFO = Pattern.compile("^([a-zA-Z][a-zA-Z0-9+.-]*://)([^@/]*)@");

  private BrokerUrls() {}

  /** The URLs of {@code urls}, split at commas, stripped, blank ones left out. */
  public static List<String> split(String urls) {
    List<String> out = new ArrayList<>();
    for (String part : urls.split(",")) {
      if (!part.isBlank()) {
        out.add(part.strip());
      }
    }
    return out;
  }

  /**
   * {@code url} with the password of its user info replaced by {@code ****}: {@code
   * scheme://user:****@...}.
   *
   * @param bareUserInfoIsSecret whether user info without a colon is a secret (a token, as in NATS:
   *     shown as {@code :****}) rather than a user name (as in AMQP and Redis: shown as {@code
   *     user:****})
   */
  public static String mask(String url, boolean bareUserInfoIsSecret) {
    Matcher m = USERINFO.matcher(url);
    if (!m.find()) {
      return url;
    }
    String userInfo = m.group(2);
    int colon = userInfo.indexOf(':');
    String user = colon >= 0 ? userInfo.substring(0, colon) : bareUserInfoIsSecret ? "" : userInfo;
    return m.group(1) + user + ":****@" + url.substring(m.end());
  }

  /**
   * The user name of {@code url}'s user info (before its first colon), or {@code null} for none.
   */
  public static String user(URI url) {
    String info = url.getUserInfo();
    if (info == null) {
      return null;
    }
    int colon = info.indexOf(':');
    String user = colon < 0 ? info : info.substring(0, colon);
    return user.isEmpty() ? null : user;
  }

  /** The password of {@code url}'s user info (after its first colon), or {@code null} for none. */
  public static String password(URI url) {
    String info = url.getUserInfo();
    int colon = info == null ? -1 : info.indexOf(':');
    return colon < 0 ? null : info.substring(colon + 1);
  }

  /**
   * The problem every broker URL can have: a scheme not in {@code schemes}, or no host; {@code
   * null} when it has neither.
   *
   * @param parsed the URL
   * @param schemes the schemes the sink accepts, in the order the message names them
   * @param example a URL to show in the message, e.g. {@code nats://host:4222}
   * @param shown the URL as the message may show it (never with a secret)
   */
  public static String schemeOrHostProblem(
      URI parsed, List<String> schemes, String example, String shown) {
    String scheme = parsed.getScheme() == null ? "" : parsed.getScheme().toLowerCase(Locale.ROOT);
    if (!schemes.contains(scheme)) {
      List<String> names = schemes.stream().map(s -> s + "://").toList();
      String last = names.get(names.size() - 1);
      String list =
          names.size() == 1
              ? last
              : String.join(", ", names.subList(0, names.size() - 1)) + " or " + last;
      return "must start with " + list + ", got " + shown;
    }
    if (parsed.getHost() == null || parsed.getHost().isBlank()) {
      return "must name a host (" + example + "), got " + shown;
    }
    return null;
  }
}
