package io.outbox.relay.config;

import com.typesafe.config.ConfigOrigin;
import java.util.ArrayList;
import java.util.List;

/**
 * Collects problems while the settings are read, so that all of them are reported at once. A
 * problem below a key that already has one (say {@code source.type} when {@code source} itself is
 * not an object) is a consequence of it and is dropped.
 */
final class Problems {

  private final List<ConfigProblem> list = new ArrayList<>();
  private int reported;

  void add(String path, String message, ConfigOrigin origin) {
    add(ConfigProblem.of(path, message, origin));
  }

  void add(ConfigProblem problem) {
    reported++;
    for (ConfigProblem p : list) {
      if (problem.path().equals(p.path()) || problem.path().startsWith(p.path() + ".")) {
        return;
      }
    }
    list.add(problem);
  }

  /**
   * How many problems were reported so far, dropped ones included: a step that reported any has
   * failed even if its problem was a consequence of an earlier one.
   */
  int reported() {
    return reported;
  }

  boolean isEmpty() {
    return list.isEmpty();
  }

  List<ConfigProblem> list() {
    return List.copyOf(list);
  }

  /** Throws when anything was found. */
  void throwIfAny(String source) {
    if (!list.isEmpty()) {
      throw new ConfigProblemsException(source, list);
    }
  }
}
