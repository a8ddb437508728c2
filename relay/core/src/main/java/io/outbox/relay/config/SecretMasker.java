package io.outbox.relay.config;

import com.typesafe.config.ConfigList;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Decides which settings are secrets and hides them: values of keys such as {@code password},
 * {@code *-password}, {@code secret}, {@code token} or {@code sasl.jaas.config}, the password in a
 * URI's user info ({@code amqp://user:******@host}) and {@code password=}-like parameters of URLs
 * ({@code sslpassword=}, {@code token=}, ...).
 */
public final class SecretMasker {

  /** What a hidden value is shown as. */
  public static final String MASK = "******";

  private static final List<String> SECRET_WORDS =
      List.of("password", "passwd", "secret", "token", "credential", "apikey", "api-key");

  // scheme://user:password@host -> keeps scheme and user, hides the password
  private static final Pattern URI_USER_INFO =
      Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*://[^/\\s:@]*):([^@/\\s]*)@");
  // ...?user=app&password=secret (also sslpassword=, client_secret=, token=) -> hides the value
  private static final Pattern PASSWORD_PARAMETER =
      Pattern.compile("(?i)([?&;][a-z0-9_.-]*(?:password|passwd|pwd|secret|token)=)[^&;\\s]*");

  private SecretMasker() {}

  /**
   * Whether the key at {@code path} holds a secret; only the last key of the path (and {@code
   * sasl.jaas.config}) matters, so {@code producer."ssl.key.password"} is one.
   */
  public static boolean isSecret(String path) {
    String p = path.toLowerCase(Locale.ROOT).replace("\"", "");
    if (p.endsWith("sasl.jaas.config")) {
      return true;
    }
    String last = p.substring(p.lastIndexOf('.') + 1);
    for (String word : SECRET_WORDS) {
      if (last.contains(word)) {
        return true;
      }
    }
    return false;
  }

  /** Hides a password embedded in a URI or URL; other text is returned unchanged. */
  public static String maskEmbedded(String value) {
    if (value == null || value.indexOf(':') < 0 && value.indexOf('=') < 0) {
      return value;
    }
    String masked = URI_USER_INFO.matcher(value).replaceAll("$1:" + MASK + "@");
    return PASSWORD_PARAMETER.matcher(masked).replaceAll("$1" + MASK);
  }

  /**
   * How the value of {@code path} may be shown: masked entirely, or with embedded secrets hidden.
   */
  public static String display(String path, String value) {
    if (value == null) {
      return null;
    }
    return isSecret(path) ? MASK : maskEmbedded(value);
  }

  /**
   * A copy of {@code object} (found at {@code path}) with every secret replaced by {@link #MASK}.
   * Origins are kept.
   */
  public static ConfigObject mask(ConfigObject object, String path) {
    Map<String, Object> copy = new LinkedHashMap<>();
    for (Map.Entry<String, ConfigValue> e : object.entrySet()) {
      copy.put(e.getKey(), mask(e.getValue(), path + "." + quoteIfNeeded(e.getKey())));
    }
    return ConfigValueFactory.fromMap(copy).withOrigin(object.origin());
  }

  private static ConfigValue mask(ConfigValue value, String path) {
    switch (value.valueType()) {
      case OBJECT:
        return mask((ConfigObject) value, path);
      case LIST:
        List<ConfigValue> items = new ArrayList<>();
        for (ConfigValue item : (ConfigList) value) {
          items.add(mask(item, path));
        }
        return ConfigValueFactory.fromIterable(items).withOrigin(value.origin());
      case NULL:
        return value;
      case STRING:
        return ConfigValueFactory.fromAnyRef(display(path, (String) value.unwrapped()))
            .withOrigin(value.origin());
      default: // NUMBER, BOOLEAN
        return isSecret(path)
            ? ConfigValueFactory.fromAnyRef(MASK).withOrigin(value.origin())
            : value;
    }
  }

  private static String quoteIfNeeded(String key) {
    return key.contains(".") ? "\"" + key + "\"" : key;
  }
}
