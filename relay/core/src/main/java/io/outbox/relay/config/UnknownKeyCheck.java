package io.outbox.relay.config;

import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Finds keys that the reference does not know (typos must fail rather than be ignored) and objects
 * written where a value is expected or the other way round. A key whose reference value is an empty
 * object ({@code properties { }}) is a free-form map: its contents are not checked. So is a map
 * that reference.conf fills with defaults and names, by its path within a pipeline, under {@code
 * outbox-relay.free-form-maps} (e.g. {@code "sink.kafka.producer" = true}).
 */
final class UnknownKeyCheck {

  /** The key of the root's object naming free-form maps that have defaults. */
  static final String FREE_FORM_MAPS = "free-form-maps";

  private final Problems problems;
  private final Set<String> freeForm;

  /**
   * @param problems where problems go
   * @param reference the reference {@code outbox-relay} subtree, for its {@value #FREE_FORM_MAPS}
   */
  UnknownKeyCheck(Problems problems, ConfigObject reference) {
    this.problems = problems;
    this.freeForm =
        reference.get(FREE_FORM_MAPS) instanceof ConfigObject maps
            ? maps.toConfig().entrySet().stream()
                .filter(e -> Boolean.TRUE.equals(e.getValue().unwrapped()))
                .map(Map.Entry::getKey)
                .collect(Collectors.toUnmodifiableSet())
            : Set.of();
  }

  /** Checks the relay's settings outside its pipelines (the pipeline defaults included). */
  void checkRoot(ConfigObject actual, ConfigObject reference, String path) {
    check(actual, reference, path, null);
  }

  /** Checks one pipeline's own settings against the reference pipeline defaults. */
  void checkPipeline(ConfigObject actual, ConfigObject reference, String path) {
    check(actual, reference, path, "");
  }

  /**
   * Checks {@code actual} (found at {@code path}) against {@code reference}.
   *
   * @param actual the merged settings (the user's over the reference)
   * @param reference the reference tree the keys must come from
   * @param path the full key path of {@code actual}
   * @param inPipeline the path of {@code actual} within a pipeline ("" at its root), or {@code
   *     null} outside pipeline settings
   */
  private void check(ConfigObject actual, ConfigObject reference, String path, String inPipeline) {
    for (Map.Entry<String, ConfigValue> e : new TreeMap<>(actual).entrySet()) {
      String key = e.getKey();
      ConfigValue value = e.getValue();
      String keyPath = path + "." + ConfigUtil.joinPath(key);
      String within =
          inPipeline != null
              ? (inPipeline.isEmpty() ? "" : inPipeline + ".") + ConfigUtil.joinPath(key)
              : (key.equals("pipeline-defaults") ? "" : null);
      ConfigValue expected = reference.get(key);
      if (expected == null) {
        problems.add(keyPath, "unknown key" + suggestion(key, reference), value.origin());
      } else if (expected instanceof ConfigObject expectedObject) {
        if (!(value instanceof ConfigObject valueObject)) {
          problems.add(keyPath, "must be an object, not " + kindOf(value), value.origin());
        } else if (!expectedObject.isEmpty() && (within == null || !freeForm.contains(within))) {
          check(valueObject, expectedObject, keyPath, within);
        }
      } else if (value.valueType() == ConfigValueType.OBJECT
          && expected.valueType() != ConfigValueType.NULL) {
        problems.add(keyPath, "must be a single value, not an object", value.origin());
      }
    }
  }

  private static String kindOf(ConfigValue v) {
    return switch (v.valueType()) {
      case LIST -> "a list";
      case NULL -> "null";
      case STRING -> "a string";
      case NUMBER -> "a number";
      case BOOLEAN -> "a boolean";
      case OBJECT -> "an object";
    };
  }

  /** ", did you mean 'x'?" for a known key within edit distance 2, else the known keys. */
  private static String suggestion(String key, ConfigObject reference) {
    String best = null;
    int bestDistance = 3;
    for (String known : new TreeMap<>(reference).keySet()) {
      int d = distance(key, known);
      if (d < bestDistance) {
        best = known;
        bestDistance = d;
      }
    }
    if (best != null) {
      return " (did you mean '" + best + "'?)";
    }
    return reference.isEmpty()
        ? ""
        : " (known here: " + String.join(", ", new TreeMap<>(reference).keySet()) + ")";
  }

  /** Levenshtein distance. */
  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
