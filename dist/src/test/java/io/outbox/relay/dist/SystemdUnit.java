package io.outbox.relay.dist;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A systemd unit file of deploy/systemd read as systemd reads it: sections of {@code Key=value}
 * lines, comments only on lines of their own, a key possibly repeated.
 */
final class SystemdUnit {
  private final String file;
  private final Map<String, Map<String, List<String>>> sections = new LinkedHashMap<>();

  private SystemdUnit(String file) {
    this.file = file;
  }

  /** The unit at {@code relative} (from the repository's root). */
  static SystemdUnit read(String relative) {
    SystemdUnit unit = new SystemdUnit(relative);
    Map<String, List<String>> section = null;
    for (String raw : RepositoryFiles.read(relative).lines().toList()) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
        continue;
      }
      if (line.startsWith("[") && line.endsWith("]")) {
        section =
            unit.sections.computeIfAbsent(
                line.substring(1, line.length() - 1), s -> new LinkedHashMap<>());
      } else if (section == null || !line.contains("=")) {
        throw new AssertionError(relative + ": not a key=value line in a section: " + raw);
      } else {
        int eq = line.indexOf('=');
        section
            .computeIfAbsent(line.substring(0, eq).strip(), k -> new ArrayList<>())
            .add(line.substring(eq + 1).strip());
      }
    }
    return unit;
  }

  String file() {
    return file;
  }

  /** The section names, in file order. */
  List<String> sections() {
    return List.copyOf(sections.keySet());
  }

  /** Every value of {@code key} in {@code section}, in file order (empty when absent). */
  List<String> all(String section, String key) {
    return sections.getOrDefault(section, Map.of()).getOrDefault(key, List.of());
  }

  /**
   * The value of {@code key} in {@code section}: the last one, as systemd takes it; "" when absent.
   */
  String get(String section, String key) {
    List<String> values = all(section, key);
    return values.isEmpty() ? "" : values.get(values.size() - 1);
  }

  /** Every key=value of the unit, as "Section.Key=value" lines. */
  List<String> settings() {
    List<String> settings = new ArrayList<>();
    sections.forEach(
        (s, keys) ->
            keys.forEach((k, values) -> values.forEach(v -> settings.add(s + "." + k + "=" + v))));
    return settings;
  }
}
