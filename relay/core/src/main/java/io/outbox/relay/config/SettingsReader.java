package io.outbox.relay.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigOrigin;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads typed values from one config subtree. A bad value becomes a {@link ConfigProblem} naming
 * the full key path, the value (masked when secret) and where it was written, and reading goes on,
 * so that every problem is reported at once. Getters return {@code null} for bad values.
 */
final class SettingsReader {

  private final Config config;
  private final String base;
  private final Problems problems;
  private final ConfigOrigin fallbackOrigin;
  private final SecretMasker secrets;

  /**
   * @param config the subtree
   * @param base the full key path of the subtree, e.g. {@code outbox-relay.pipelines.orders}
   * @param problems where problems go
   * @param secrets which values are masked in messages
   */
  SettingsReader(Config config, String base, Problems problems, SecretMasker secrets) {
    this(config, base, problems, null, secrets);
  }

  /**
   * @param fallbackOrigin where problems point when the value is missing or is a reference default
   *     (e.g. the pipeline's object in the user's file)
   */
  SettingsReader(
      Config config,
      String base,
      Problems problems,
      ConfigOrigin fallbackOrigin,
      SecretMasker secrets) {
    this.config = config;
    this.secrets = secrets;
    this.base = base;
    this.problems = problems;
    this.fallbackOrigin = fallbackOrigin;
  }

  /** The full key path of {@code key}. */
  String path(String key) {
    return base + "." + key;
  }

  /** The raw value at {@code key}, including explicit nulls; {@code null} when absent. */
  ConfigValue raw(String key) {
    List<String> segments;
    try {
      segments = ConfigUtil.splitPath(key);
    } catch (ConfigException e) {
      return null; // not a valid path expression, so nothing is there
    }
    ConfigValue v = config.root();
    for (String segment : segments) {
      if (!(v instanceof ConfigObject o)) {
        return null;
      }
      v = o.get(segment);
    }
    return v;
  }

  /** Records a problem about {@code key}, with the origin of its value when there is one. */
  void problem(String key, String message) {
    problems.add(path(key), message, origin(raw(key)));
  }

  /**
   * Where a value was written; a value missing or taken from a {@code reference.conf} was not
   * written by the user, so the fallback origin is more useful.
   */
  ConfigOrigin origin(ConfigValue v) {
    if (v == null || v.origin() == null || "reference.conf".equals(v.origin().resource())) {
      return fallbackOrigin;
    }
    return v.origin();
  }

  /** A string that must be present and not blank. */
  String requiredString(String key, String whatItIs) {
    ConfigValue v = raw(key);
    if (v == null || v.valueType() == ConfigValueType.NULL) {
      problem(key, "is required: " + whatItIs);
      return null;
    }
    String s = optionalString(key);
    if (s != null && s.isBlank()) {
      problem(key, "must not be blank: " + whatItIs);
      return null;
    }
    return s;
  }

  /** A string, or {@code null} when absent or null. Numbers and booleans are taken as text. */
  String optionalString(String key) {
    ConfigValue v = raw(key);
    if (v == null || v.valueType() == ConfigValueType.NULL) {
      return null;
    }
    if (v.valueType() == ConfigValueType.OBJECT || v.valueType() == ConfigValueType.LIST) {
      problem(key, "must be a string, not " + describe(key, v));
      return null;
    }
    return String.valueOf(v.unwrapped());
  }

  /** A whole number in {@code [min, max]}. */
  Integer intIn(String key, int min, int max) {
    BigDecimal n = number(key, "a whole number");
    if (n == null) {
      return null;
    }
    if (n.stripTrailingZeros().scale() > 0) {
      problem(key, "must be a whole number, not " + describe(key, raw(key)));
      return null;
    }
    if (n.compareTo(BigDecimal.valueOf(min)) < 0 || n.compareTo(BigDecimal.valueOf(max)) > 0) {
      problem(key, outOfRange(key, min, max));
      return null;
    }
    return n.intValueExact();
  }

  /** A number in {@code [min, max]}. */
  Double doubleIn(String key, double min, double max) {
    BigDecimal n = number(key, "a number");
    if (n == null) {
      return null;
    }
    double d = n.doubleValue();
    if (d < min || d > max) {
      problem(key, outOfRange(key, min, max));
      return null;
    }
    return d;
  }

  /** A positive HOCON duration ({@code 500ms}, {@code 30s}, {@code 5m}; a bare number is ms). */
  Duration positiveDuration(String key) {
    ConfigValue v = raw(key);
    if (!present(key, v, "a duration such as 500ms, 30s or 5m")) {
      return null;
    }
    Duration d;
    try {
      d = config.getDuration(key);
    } catch (ConfigException e) {
      problem(key, describe(key, v) + " is not a duration (use e.g. 500ms, 30s, 5m)");
      return null;
    }
    if (d.isNegative() || d.isZero()) {
      problem(key, "must be a positive duration, not " + describe(key, v));
      return null;
    }
    return d;
  }

  /**
   * A duration of at least {@code min} for something that can be switched off: {@code off}, {@code
   * false} or {@code 0} give {@link Duration#ZERO}.
   */
  Duration durationOrOff(String key, Duration min) {
    ConfigValue v = raw(key);
    String forms = "a duration such as 12h or 7d, or off";
    if (!present(key, v, forms)) {
      return null;
    }
    Object unwrapped = v.unwrapped();
    if (Boolean.FALSE.equals(unwrapped)
        || unwrapped instanceof String text && "off".equalsIgnoreCase(text.strip())) {
      return Duration.ZERO;
    }
    Duration d;
    try {
      d = config.getDuration(key);
    } catch (ConfigException e) {
      problem(key, describe(key, v) + " is not " + forms);
      return null;
    }
    if (d.isZero()) {
      return d;
    }
    if (d.compareTo(min) < 0) {
      String least = min.toMillis() % 1000 == 0 ? min.toSeconds() + "s" : min.toMillis() + "ms";
      problem(key, "must be off (or 0) or at least " + least + ", not " + describe(key, v));
      return null;
    }
    return d;
  }

  /** One of {@code choices}, written in lower case. */
  <T> T oneOf(String key, Map<String, T> choices) {
    String s = optionalString(key);
    if (s == null) {
      if (raw(key) == null || raw(key).valueType() == ConfigValueType.NULL) {
        problem(key, "is required: one of " + String.join(" | ", choices.keySet()));
      }
      return null;
    }
    T value = choices.get(s.toLowerCase(Locale.ROOT));
    if (value == null) {
      problem(
          key,
          "must be one of "
              + String.join(" | ", choices.keySet())
              + ", not "
              + describe(key, raw(key)));
    }
    return value;
  }

  /**
   * A free-form map of text values; nested objects are flattened with dots ({@code ssl { mode = x
   * }} gives {@code ssl.mode}).
   */
  Map<String, String> stringMap(String key) {
    ConfigValue v = raw(key);
    if (v == null || v.valueType() == ConfigValueType.NULL) {
      return Map.of();
    }
    if (!(v instanceof ConfigObject o)) {
      problem(key, "must be an object of settings, not " + describe(key, v));
      return null;
    }
    Map<String, String> out = new LinkedHashMap<>();
    return flatten(key, o, "", out) ? out : null;
  }

  private boolean flatten(String key, ConfigObject o, String prefix, Map<String, String> out) {
    boolean ok = true;
    for (Map.Entry<String, ConfigValue> e : o.entrySet()) {
      String name = prefix + e.getKey();
      String childKey = key + "." + ConfigUtil.quoteString(e.getKey());
      ConfigValue child = e.getValue();
      switch (child.valueType()) {
        case OBJECT -> ok &= flatten(childKey, (ConfigObject) child, name + ".", out);
        case LIST -> {
          problems.add(path(childKey), "must be a single value, not a list", origin(child));
          ok = false;
        }
        case NULL -> {} // an explicit null unsets a property
        default -> out.put(name, String.valueOf(child.unwrapped()));
      }
    }
    return ok;
  }

  private BigDecimal number(String key, String what) {
    ConfigValue v = raw(key);
    if (!present(key, v, what)) {
      return null;
    }
    Object u = v.unwrapped();
    try {
      if (v.valueType() == ConfigValueType.NUMBER) {
        return new BigDecimal(u.toString());
      }
      if (v.valueType() == ConfigValueType.STRING) {
        return new BigDecimal(((String) u).strip());
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problem(key, "must be " + what + ", not " + describe(key, v));
    return null;
  }

  private boolean present(String key, ConfigValue v, String what) {
    if (v == null || v.valueType() == ConfigValueType.NULL) {
      problem(key, "is required: " + what);
      return false;
    }
    return true;
  }

  private String outOfRange(String key, Number min, Number max) {
    String range =
        max.doubleValue() >= Integer.MAX_VALUE ? ">= " + min : "in [" + min + ", " + max + "]";
    return "must be " + range + ", not " + describe(key, raw(key));
  }

  /** A value as shown in messages: quoted text (secrets masked), numbers, or its kind. */
  String describe(String key, ConfigValue v) {
    if (v == null) {
      return "missing";
    }
    return switch (v.valueType()) {
      case OBJECT -> "an object";
      case LIST -> "a list";
      case NULL -> "null";
      case STRING -> "\"" + secrets.display(path(key), (String) v.unwrapped()) + "\"";
      default -> secrets.isSecret(path(key)) ? SecretMasker.MASK : v.unwrapped().toString();
    };
  }
}
