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
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BinaryOperator;
import java.util.function.Consumer;

/**
 * Where a {@link SettingsReader}'s values are and where its problems go: the subtree, its full key
 * path, the values as written (secrets masked) and their origins.
 */
abstract class SettingsTree {

  final Config config;
  final String base;
  final Consumer<SettingsProblem> sink;
  final ConfigOrigin fallbackOrigin;
  final BinaryOperator<String> shown;
  final PluginContext context;
  final List<SettingsProblem> problems = new ArrayList<>();
  private final Set<String> looked = new LinkedHashSet<>();

  SettingsTree(
      Config config,
      String base,
      Consumer<SettingsProblem> sink,
      ConfigOrigin fallbackOrigin,
      BinaryOperator<String> shown,
      PluginContext context) {
    this.config = config;
    this.base = base;
    this.sink = sink;
    this.fallbackOrigin = fallbackOrigin;
    this.shown = shown;
    this.context = context;
  }

  /** The pipeline whose plug-in settings these are (a plug-in's reader). */
  public String pipeline() {
    return context.pipeline();
  }

  /** The full key path of {@code key}. */
  public String path(String key) {
    return base + "." + key;
  }

  /** The raw value at {@code key}, including explicit nulls; {@code null} when absent. */
  public ConfigValue raw(String key) {
    looked.add(key);
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

  /**
   * Where a value was written; a value missing or taken from a {@code reference.conf} was not
   * written by the user, so the fallback origin is more useful.
   */
  public ConfigOrigin origin(ConfigValue v) {
    if (v == null || v.origin() == null || "reference.conf".equals(v.origin().resource())) {
      return fallbackOrigin;
    }
    return v.origin();
  }

  /** Records a problem about {@code key}, with the origin of its value when there is one. */
  public void problem(String key, String message) {
    record(SettingsProblem.of(path(key), message, origin(raw(key))));
  }

  private void record(SettingsProblem p) {
    problems.add(p);
    sink.accept(p);
  }

  /**
   * Every key looked up so far, in order: after a plug-in's {@code read}, the keys it declares
   * (PluginKeysTest keeps them equal to its {@code reference.conf}).
   */
  public Set<String> keysLooked() {
    return Collections.unmodifiableSet(looked);
  }

  /** Whether this reader found no problem so far. */
  public boolean ok() {
    return problems.isEmpty();
  }

  /** Every problem this reader found so far. */
  public List<SettingsProblem> problems() {
    return List.copyOf(problems);
  }

  /** The value at {@code key} as shown in messages: quoted text (secrets masked), or its kind. */
  public String describe(String key) {
    ConfigValue v = raw(key);
    if (v == null) {
      return "missing";
    }
    return switch (v.valueType()) {
      case OBJECT -> "an object";
      case LIST -> "a list";
      case NULL -> "null";
      case STRING -> "\"" + shown.apply(path(key), (String) v.unwrapped()) + "\"";
      default -> shown.apply(path(key), v.unwrapped().toString());
    };
  }

  /** The pipeline runs at least one lane (a plug-in's reader). */
  public void lanes() {
    if (context != null && context.lanes() < 1) {
      record(
          new SettingsProblem(
              context.path() + ".lanes", "must be at least 1, not " + context.lanes()));
    }
  }

  /** Whether {@code key} holds a value; a problem ("is required: what") when not. */
  final boolean present(String key, String what) {
    ConfigValue v = raw(key);
    if (v == null || v.valueType() == ConfigValueType.NULL) {
      problem(key, "is required: " + what);
      return false;
    }
    return true;
  }
}
