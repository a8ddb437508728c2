package io.outbox.relay.docs;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValue;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The key paths of every {@code reference.conf} (relay/core's and each plug-in's), as the relay
 * accepts them (UnknownKeyCheck): {@code outbox-relay.pipelines.<name>.*} is checked against {@code
 * outbox-relay.pipeline-defaults.*}, and the contents of a free-form map (an empty object in the
 * reference, or one named under {@code outbox-relay.free-form-maps}) are anything. A secret key
 * {@code x} may also be written {@code x-file}. In the paths it checks, a segment {@code <name>} or
 * {@code *} stands for any key.
 */
public final class ReferenceKeys {

  private static final String ROOT = "outbox-relay";
  private static final String SECRET_FILE = "-file";

  private final ConfigObject root;
  private final ConfigObject pipeline;
  private final Set<String> freeForm;

  /** An object of the reference and its path within a pipeline ({@code null} outside one). */
  private record Place(ConfigObject node, String within) {}

  private ReferenceKeys(Config reference) {
    this.root = reference.getObject(ROOT);
    this.pipeline = reference.getObject(ROOT + ".pipeline-defaults");
    this.freeForm =
        reference.hasPath(ROOT + ".free-form-maps")
            ? reference.getConfig(ROOT + ".free-form-maps").entrySet().stream()
                .filter(e -> Boolean.TRUE.equals(e.getValue().unwrapped()))
                .map(Map.Entry::getKey)
                .collect(Collectors.toUnmodifiableSet())
            : Set.of();
  }

  /** Every reference.conf of the class path, merged. */
  public static ReferenceKeys fromClassPath() {
    return of(ConfigFactory.defaultReference(ReferenceKeys.class.getClassLoader()));
  }

  /** The keys of {@code reference} (a test's own). */
  public static ReferenceKeys of(Config reference) {
    return new ReferenceKeys(reference);
  }

  /** The keys directly under {@code outbox-relay}. */
  public Set<String> rootKeys() {
    return root.keySet();
  }

  /** The keys directly under a pipeline. */
  public Set<String> pipelineKeys() {
    return pipeline.keySet();
  }

  /** Whether {@code path}, which begins with {@code outbox-relay}, is a key or object. */
  public boolean knowsAbsolute(List<String> path) {
    return !path.isEmpty() && path.get(0).equals(ROOT) && knows(root, path, 1, null);
  }

  /** Whether {@code path} is a key or object within a pipeline or under {@code outbox-relay}. */
  public boolean knowsRelative(List<String> path) {
    return knows(pipeline, path, 0, "") || knows(root, path, 0, null);
  }

  /**
   * Whether {@code path} is the end of a key path: a fragment such as {@code polling {
   * lease-timeout = 5s }} shown without what encloses it.
   */
  public boolean knowsAsSuffix(List<String> path) {
    List<Place> places = new ArrayList<>();
    collect(root, null, places);
    // A fragment begins with a real key: a free-form map's contents are no place to start from.
    return places.stream()
        .filter(p -> !p.node().isEmpty() && (p.within() == null || !freeForm.contains(p.within())))
        .anyMatch(p -> knows(p.node(), path, 0, p.within()));
  }

  private void collect(ConfigObject node, String within, List<Place> places) {
    places.add(new Place(node, within));
    for (Map.Entry<String, ConfigValue> e : node.entrySet()) {
      if (e.getValue() instanceof ConfigObject child) {
        collect(child, inner(node, within, e.getKey()), places);
      }
    }
  }

  /** The path within a pipeline of {@code node}'s child {@code key}, or null outside a pipeline. */
  private String inner(ConfigObject node, String within, String key) {
    if (within != null) {
      return within.isEmpty() ? key : within + "." + key;
    }
    return node == root && key.equals("pipeline-defaults") ? "" : null;
  }

  private boolean knows(ConfigObject node, List<String> path, int i, String within) {
    if (i == path.size()) {
      return true;
    }
    if (node.isEmpty() || (within != null && freeForm.contains(within))) {
      return true;
    }
    String segment = path.get(i);
    if (node == root && segment.equals("pipelines")) {
      // pipelines.<name>.* follows the pipeline defaults.
      return path.size() <= i + 2 || knows(pipeline, path, i + 2, "");
    }
    boolean any = (segment.startsWith("<") && segment.endsWith(">")) || segment.equals("*");
    for (String key : any ? node.keySet() : Set.of(segment)) {
      ConfigValue value = node.get(key);
      if (value instanceof ConfigObject child) {
        if (knows(child, path, i + 1, inner(node, within, key))) {
          return true;
        }
      } else if (value != null && i == path.size() - 1) {
        return true;
      }
    }
    if (i == path.size() - 1 && segment.endsWith(SECRET_FILE)) {
      String secret = segment.substring(0, segment.length() - SECRET_FILE.length());
      ConfigValue value = node.get(secret);
      return value != null && !(value instanceof ConfigObject);
    }
    return false;
  }
}
