package io.outbox.relay.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import io.outbox.relay.spi.SettingsProblem;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Settings from the environment, by typesafe-config's convention ({@code
 * ConfigFactory.systemEnvironmentOverrides()}): a variable named {@code CONFIG_FORCE_<key path>}
 * sets that key over the file, where a single {@code _} stands for {@code .}, {@code __} for {@code
 * -} and {@code ___} for {@code _} (more is an error); keys keep their case. So {@code
 * CONFIG_FORCE_outbox__relay_http_port=9500} sets {@code outbox-relay.http.port}. Values are
 * strings (numbers, booleans and durations are read from strings).
 *
 * <p>The library's own version is not called because it reads only the process environment and
 * gives every value the same origin; here the environment is given (tests pass a map) and each
 * value names its variable as its origin, so problems and {@code check-config} point at it. {@code
 * EnvironmentOverridesTest} checks that both map the same variables to the same keys.
 */
final class EnvironmentOverrides {

  /** The prefix of the variables that set keys, the library's. */
  static final String PREFIX = "CONFIG_FORCE_";

  /**
   * What the origin description of a value from the environment (an override, a {@code ${?VAR}})
   * starts with; the variable's name follows.
   */
  static final String ORIGIN = "environment variable ";

  private static final String ROOT = "outbox-relay";

  private EnvironmentOverrides() {}

  /**
   * {@code base} with the settings of the {@code CONFIG_FORCE_} variables of {@code environment}
   * set over it; a variable that maps to no usable key is a problem in {@code problems}. Each key
   * is set on its own, so the objects around it keep their origin (the order of the file's
   * pipelines).
   */
  static Config over(Config base, Map<String, String> environment, List<SettingsProblem> problems) {
    // Sorted by key path: where one variable sets a.b and another a, the object wins (as in the
    // library's properties parser).
    Map<String, Setting> byPath = new TreeMap<>();
    for (Map.Entry<String, String> e : new TreeMap<>(environment).entrySet()) {
      String variable = e.getKey();
      if (!variable.startsWith(PREFIX)) {
        continue;
      }
      List<String> segments;
      try {
        segments = segments(variable);
      } catch (IllegalArgumentException bad) {
        problems.add(new SettingsProblem(variable, bad.getMessage(), ORIGIN + variable));
        continue;
      }
      String path = ConfigUtil.joinPath(segments);
      if (!segments.get(0).equals(ROOT) && segments.get(0).equalsIgnoreCase(ROOT)) {
        problems.add(
            new SettingsProblem(
                path,
                "keys are case-sensitive and the relay's are under "
                    + ROOT
                    + " (did you mean "
                    + variable(String.join(".", segments).toLowerCase(Locale.ROOT))
                    + "?)",
                ORIGIN + variable));
        continue;
      }
      byPath.put(path, new Setting(variable, segments));
    }
    Config result = base;
    for (Setting setting : byPath.values()) {
      String variable = setting.variable();
      ConfigValue value =
          ConfigValueFactory.fromAnyRef(environment.get(variable), ORIGIN + variable);
      result = set(result, setting.keys(), value);
    }
    return result;
  }

  /**
   * {@code config} with {@code value} at {@code keys}: the objects that exist keep their origin,
   * the ones created around the value take its origin (Config.withValue would describe them as
   * "withValue(path)").
   */
  private static Config set(Config config, List<String> keys, ConfigValue value) {
    ConfigObject at = config.root();
    int existing = 0;
    while (existing < keys.size() - 1 && at.get(keys.get(existing)) instanceof ConfigObject child) {
      at = child;
      existing++;
    }
    // keys[0..existing) are objects already; keys[existing] is set, with new objects below it.
    ConfigValue placed = value;
    for (int i = keys.size() - 1; i > existing; i--) {
      placed = ConfigValueFactory.fromMap(Map.of(keys.get(i), placed)).withOrigin(value.origin());
    }
    return config.withValue(ConfigUtil.joinPath(keys.subList(0, existing + 1)), placed);
  }

  /**
   * The keys of the path {@code variable} (which starts with {@link #PREFIX}) sets.
   *
   * @throws IllegalArgumentException when it sets no key: four or more underscores in a row, or an
   *     empty key (nothing after the prefix, a leading or trailing {@code _})
   */
  static List<String> segments(String variable) {
    String rest = variable.substring(PREFIX.length());
    StringBuilder path = new StringBuilder();
    int i = 0;
    while (i < rest.length()) {
      char c = rest.charAt(i);
      if (c != '_') {
        path.append(c);
        i++;
        continue;
      }
      int run = 0;
      while (i < rest.length() && rest.charAt(i) == '_') {
        run++;
        i++;
      }
      switch (run) {
        case 1 -> path.append('.');
        case 2 -> path.append('-');
        case 3 -> path.append('_');
        default ->
            throw new IllegalArgumentException(
                run
                    + " underscores in a row map to no key character (_ is '.', __ is '-', ___ is"
                    + " '_')");
      }
    }
    // Split on '.' only, as the library does: a key written here is never quoted.
    List<String> segments = List.of(path.toString().split("\\.", -1));
    if (segments.stream().anyMatch(String::isEmpty)) {
      throw new IllegalArgumentException(
          "sets no key path (\""
              + path
              + "\"): name the key after "
              + PREFIX
              + ", e.g. "
              + PREFIX
              + "outbox__relay_http_port for outbox-relay.http.port");
    }
    return segments;
  }

  /** A variable and the keys of the path it sets. */
  private record Setting(String variable, List<String> keys) {}

  /** The variable that sets the key {@code path} (keys joined by dots, none quoted). */
  static String variable(String path) {
    StringBuilder name = new StringBuilder(PREFIX);
    for (char c : path.toCharArray()) {
      switch (c) {
        case '.' -> name.append('_');
        case '-' -> name.append("__");
        case '_' -> name.append("___");
        default -> name.append(c);
      }
    }
    return name.toString();
  }
}
