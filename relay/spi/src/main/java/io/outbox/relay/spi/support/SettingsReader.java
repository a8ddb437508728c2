package io.outbox.relay.spi.support;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigOrigin;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BinaryOperator;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The one reader of settings, for the relay's own keys and every plug-in's: reads typed values from
 * one config subtree in one pass. A bad value becomes a {@link SettingsProblem} naming the full key
 * path, the value as written (secrets masked) and where it was written, and reading goes on, so
 * that every problem is reported at once; a getter returns {@code null} for a bad value.
 *
 * <p>A plug-in reads its settings in one method, {@code static FooSettings read(SettingsReader r)},
 * each key once, and returns the settings when {@link #ok()}; {@link #problems(PluginContext,
 * Function)} (its {@code validate}) and {@link #settings(PluginContext, Function, String)} (its
 * {@code create}) both run it.
 */
public final class SettingsReader extends SettingsTree {

  /** A reader of a plug-in's subtree, {@code context.settings()}, keeping its own problems. */
  public SettingsReader(PluginContext context) {
    super(context.settings(), context.path(), p -> {}, null, (path, value) -> value, context);
  }

  /**
   * A reader of the relay's own settings.
   *
   * @param config the subtree
   * @param base the full key path of the subtree, e.g. {@code outbox-relay.pipelines.orders}
   * @param sink where each problem goes too
   * @param fallbackOrigin where problems point when the value is missing or is a reference default
   *     (e.g. the pipeline's object in the user's file), or {@code null}
   * @param shown a value as it may be shown in a message, given its full path (masks secrets)
   */
  public SettingsReader(
      Config config,
      String base,
      Consumer<SettingsProblem> sink,
      ConfigOrigin fallbackOrigin,
      BinaryOperator<String> shown) {
    super(config, base, sink, fallbackOrigin, shown, null);
  }

  /**
   * Every problem of a plug-in's settings, as its {@code read} finds them: its {@code validate}.
   */
  public static List<SettingsProblem> problems(
      PluginContext context, Function<SettingsReader, ?> read) {
    SettingsReader reader = new SettingsReader(context);
    read.apply(reader);
    return reader.problems();
  }

  /**
   * A plug-in's settings, as its {@code read} gives them.
   *
   * @param what the plug-in, for the message, e.g. {@code Kafka sink}
   * @throws IllegalArgumentException listing every problem
   */
  public static <S> S settings(
      PluginContext context, Function<SettingsReader, S> read, String what) {
    SettingsReader reader = new SettingsReader(context);
    S settings = read.apply(reader);
    if (!reader.ok() || settings == null) {
      throw new IllegalArgumentException("invalid " + what + " settings: " + reader.problems());
    }
    return settings;
  }

  /** A string (numbers and booleans are taken as text), possibly empty. */
  public String string(String key) {
    return present(key, "a string") ? optionalString(key) : null;
  }

  /** A string that must be present and not blank. */
  public String requiredString(String key, String whatItIs) {
    if (!present(key, whatItIs)) {
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
  public String optionalString(String key) {
    ConfigValue v = raw(key);
    if (v == null || v.valueType() == ConfigValueType.NULL) {
      return null;
    }
    if (v.valueType() == ConfigValueType.OBJECT || v.valueType() == ConfigValueType.LIST) {
      problem(key, "must be a string, not " + describe(key));
      return null;
    }
    return String.valueOf(v.unwrapped());
  }

  /** {@code true} or {@code false}. */
  public Boolean bool(String key) {
    if (!present(key, "true or false")) {
      return null;
    }
    try {
      return config.getBoolean(key);
    } catch (ConfigException e) {
      problem(key, "must be true or false, not " + describe(key));
      return null;
    }
  }

  /** A whole number of at least 1. */
  public Integer positive(String key) {
    return intIn(key, 1, Integer.MAX_VALUE);
  }

  /** A whole number in {@code [min, max]}. */
  public Integer intIn(String key, int min, int max) {
    BigDecimal n = number(key, "a whole number");
    if (n == null) {
      return null;
    }
    if (n.stripTrailingZeros().scale() > 0) {
      problem(key, "must be a whole number, not " + describe(key));
      return null;
    }
    if (n.compareTo(BigDecimal.valueOf(min)) < 0 || n.compareTo(BigDecimal.valueOf(max)) > 0) {
      problem(key, outOfRange(key, min, max));
      return null;
    }
    return n.intValueExact();
  }

  /** A number in {@code [min, max]}. */
  public Double doubleIn(String key, double min, double max) {
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
  public Duration positiveDuration(String key) {
    Duration d = anyDuration(key, "a duration such as 500ms, 30s or 5m");
    if (d != null && (d.isNegative() || d.isZero())) {
      problem(key, "must be a positive duration, not " + describe(key));
      return null;
    }
    return d;
  }

  /** A duration of at least {@code min}. */
  public Duration duration(String key, Duration min) {
    Duration d = anyDuration(key, "a duration such as 500ms, 30s or 5m");
    if (d != null && d.compareTo(min) < 0) {
      problem(key, "must be at least " + shortest(min) + ", not " + describe(key));
      return null;
    }
    return d;
  }

  /**
   * A duration of at least {@code min} for something that can be switched off: {@code off}, {@code
   * false} or {@code 0} give {@link Duration#ZERO}.
   */
  public Duration durationOrOff(String key, Duration min) {
    String forms = "a duration such as 12h or 7d, or off";
    ConfigValue v = raw(key);
    if (v != null
        && (Boolean.FALSE.equals(v.unwrapped())
            || v.unwrapped() instanceof String text && "off".equalsIgnoreCase(text.strip()))) {
      return Duration.ZERO;
    }
    Duration d = anyDuration(key, forms);
    if (d == null || d.isZero()) {
      return d;
    }
    if (d.compareTo(min) < 0) {
      problem(key, "must be off (or 0) or at least " + shortest(min) + ", not " + describe(key));
      return null;
    }
    return d;
  }

  /** One of {@code choices}, written in lower case. */
  public <T> T oneOf(String key, Map<String, T> choices) {
    String s = present(key, "one of " + String.join(" | ", choices.keySet())) ? string(key) : null;
    if (s == null) {
      return null;
    }
    T value = choices.get(s.toLowerCase(Locale.ROOT));
    if (value == null) {
      problem(
          key, "must be one of " + String.join(" | ", choices.keySet()) + ", not " + describe(key));
    }
    return value;
  }

  /** One of {@code allowed}, in lower case. */
  public String oneOf(String key, String... allowed) {
    Map<String, String> choices = new LinkedHashMap<>();
    for (String a : allowed) {
      choices.put(a, a);
    }
    return oneOf(key, choices);
  }

  /** A string that {@code reason} accepts: it gives why a value is refused, or {@code null}. */
  public String checked(String key, Function<String, String> reason) {
    String value = string(key);
    String refused = value == null ? null : reason.apply(value);
    if (refused != null) {
      problem(key, refused);
      return null;
    }
    return value;
  }

  /**
   * A free-form map of text values; nested objects are flattened with dots ({@code ssl { mode = x
   * }} gives {@code ssl.mode}); an absent key or null is an empty map.
   */
  public Map<String, String> stringMap(String key) {
    ConfigValue v = raw(key);
    if (v == null || v.valueType() == ConfigValueType.NULL) {
      return Map.of();
    }
    if (!(v instanceof ConfigObject o)) {
      problem(key, "must be an object of settings, not " + describe(key));
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
          problem(childKey, "must be a single value, not a list");
          ok = false;
        }
        case NULL -> {} // an explicit null unsets a property
        default -> out.put(name, String.valueOf(child.unwrapped()));
      }
    }
    return ok;
  }

  /**
   * A list of strings, or {@code null} when it is missing or not one (a problem was added).
   *
   * @param expected the form, for the messages, e.g. {@code a list of topics such as ["t"]}
   */
  public List<String> stringList(String key, String expected) {
    if (!present(key, expected)) {
      return null;
    }
    try {
      return config.getStringList(key);
    } catch (ConfigException e) {
      problem(key, "must be " + expected + ", not " + describe(key));
      return null;
    }
  }

  /**
   * A non-empty list of names (subjects, topics), none of them blank or holding whitespace.
   *
   * @param what what one entry is, e.g. {@code subject}
   * @param example a list to show in the messages, e.g. {@code ["outbox.>"]}
   */
  public List<String> names(String key, String what, String example) {
    List<String> names = stringList(key, "a list of " + what + "s such as " + example);
    if (names != null && names.isEmpty()) {
      problem(key, "must list at least one " + what + ", such as " + example);
    }
    for (String name : names == null ? List.<String>of() : names) {
      if (name.isBlank() || name.chars().anyMatch(Character::isWhitespace)) {
        problem(key, "a " + what + " must not be empty or hold spaces: \"" + name + "\"");
      }
    }
    return names;
  }

  /**
   * A comma-separated list of URLs ({@link BrokerUrls#split}), at least one, each of which {@code
   * reason} accepts: it gives why a URL is refused (never showing a secret), or {@code null}.
   */
  public List<String> urls(String key, Function<String, String> reason) {
    String value = string(key);
    if (value == null) {
      return null;
    }
    List<String> urls = BrokerUrls.split(value);
    if (urls.isEmpty()) {
      problem(key, "must name at least one URL, not " + describe(key));
    }
    for (String url : urls) {
      String refused = reason.apply(url);
      if (refused != null) {
        problem(key, refused);
      }
    }
    return urls;
  }

  private Duration anyDuration(String key, String forms) {
    if (!present(key, forms)) {
      return null;
    }
    try {
      return config.getDuration(key);
    } catch (ConfigException e) {
      problem(key, describe(key) + " is not " + forms);
      return null;
    }
  }

  private BigDecimal number(String key, String what) {
    if (!present(key, what)) {
      return null;
    }
    ConfigValue v = raw(key);
    try {
      if (v.valueType() == ConfigValueType.NUMBER || v.valueType() == ConfigValueType.STRING) {
        return new BigDecimal(v.unwrapped().toString().strip());
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problem(key, "must be " + what + ", not " + describe(key));
    return null;
  }

  private String outOfRange(String key, Number min, Number max) {
    String range =
        max.doubleValue() >= Integer.MAX_VALUE ? ">= " + min : "in [" + min + ", " + max + "]";
    return "must be " + range + ", not " + describe(key);
  }

  private static String shortest(Duration d) {
    return d.toMillis() % 1000 == 0 && !d.isZero() ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }
}
