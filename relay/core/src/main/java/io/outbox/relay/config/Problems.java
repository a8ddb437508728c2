package io.outbox.relay.config;

import com.typesafe.config.ConfigOrigin;
import io.outbox.relay.spi.SettingsProblem;
import java.util.ArrayList;
import java.util.List;

/**
 * Collects problems while the settings are read, so that all of them are reported at once. A
 * problem below a key that already has one (say {@code source.type} when {@code source} itself is
 * not an object) is a consequence of it and is dropped.
 */
final class Problems {

  private final List<SettingsProblem> list = new ArrayList<>();
  private int reported;

  void add(String path, String message, ConfigOrigin origin) {
    add(SettingsProblem.of(path, message, origin));
  }

  /** Adds {@code problem}, unless a key above it has one already. */
  void add(SettingsProblem problem) {
    reported++;
    for (SettingsProblem p : list) {
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

  List<SettingsProblem> list() {
    return List.copyOf(list);
  }

  /** Throws when anything was found. */
  void throwIfAny(String source) {
    if (!list.isEmpty()) {
      throw new ConfigProblemsException(source, list);
    }
  }
}
