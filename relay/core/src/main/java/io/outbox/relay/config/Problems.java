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

  void add(String path, String message, ConfigOrigin origin) {
    add(ConfigProblem.of(path, message, origin));
  }

  void add(ConfigProblem problem) {
    for (ConfigProblem p : list) {
      if (problem.path().equals(p.path()) && problem.message().equals(p.message())
          || problem.path().startsWith(p.path() + ".")) {
        return;
      }
    }
    list.add(problem);
  }

  int size() {
    return list.size();
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
