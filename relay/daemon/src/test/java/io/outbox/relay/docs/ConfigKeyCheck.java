package io.outbox.relay.docs;

import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigValue;
import io.outbox.testkit.docs.MarkdownPage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks that the configuration keys a page or an example configuration names exist in a
 * reference.conf ({@link ReferenceKeys}).
 *
 * <ul>
 *   <li>A {@code hocon} code block is parsed; each of its keys must be a key path when it begins
 *       with {@code outbox-relay}, else the end of one (the block shows a fragment). A block that
 *       does not parse is reported.
 *   <li>An inline code span counts as a key when it is a dotted path ({@code a.b.c}, optionally
 *       followed by {@code = value}) that begins with {@code outbox-relay}, a key directly under it
 *       ({@code http}) or a key of a pipeline ({@code source}, {@code retry}...), and is not a
 *       link's text (a file name: {@code outbox-relay.service}). Other spans (class names, Kafka's
 *       own properties such as {@code linger.ms}) are prose, and so are the properties of other
 *       systems the caller names as such ({@code retention.ms} of a Kafka topic).
 *   <li>A file of config/ is parsed; every key must be a key path.
 * </ul>
 */
public final class ConfigKeyCheck {

  /** A dotted path, possibly with placeholders, then possibly "= value" or "{ ... }". */
  private static final Pattern INLINE_KEY =
      Pattern.compile(
          "^([a-z][a-z0-9-]*(?:\\.(?:[a-z0-9_-]+|<[a-z-]+>|\\*))+)(?:\\s*=.*|\\s*\\{.*})?$");

  private final ReferenceKeys keys;
  private final Set<String> foreign;

  /**
   * @param keys the keys of the references
   * @param foreign other systems' properties written as inline code that begin like one of ours
   */
  public ConfigKeyCheck(ReferenceKeys keys, Set<String> foreign) {
    this.keys = keys;
    this.foreign = Set.copyOf(foreign);
  }

  /** The problems of a page's keys, each as "file:line: key (why)". */
  public List<String> problems(MarkdownPage page) {
    List<String> problems = new ArrayList<>();
    for (MarkdownPage.CodeSpan span : page.codeSpans()) {
      Matcher m = INLINE_KEY.matcher(span.text().strip());
      if (span.linkText() || !m.matches() || foreign.contains(m.group(1))) {
        continue;
      }
      List<String> path = List.of(m.group(1).split("\\."));
      String first = path.get(0);
      boolean known;
      if (first.equals("outbox-relay")) {
        known = keys.knowsAbsolute(path);
      } else if (keys.pipelineKeys().contains(first) || keys.rootKeys().contains(first)) {
        known = keys.knowsRelative(path);
      } else {
        continue;
      }
      if (!known) {
        problems.add(page.at(span.line()) + ": `" + m.group(1) + "` is not a configuration key");
      }
    }
    for (MarkdownPage.CodeBlock block : page.codeBlocks()) {
      if (!block.info().equals("hocon")) {
        continue;
      }
      String text = block.text();
      int offset = block.line() - 1;
      try {
        ConfigObject parsed = ConfigFactory.parseString(text, ConfigParseOptions.defaults()).root();
        leaves(
            parsed,
            List.of(),
            (path, line) -> {
              boolean known =
                  path.get(0).equals("outbox-relay")
                      ? keys.knowsAbsolute(path)
                      : keys.knowsAsSuffix(path);
              if (!known) {
                problems.add(
                    page.at(offset + line)
                        + ": `"
                        + String.join(".", path)
                        + "` is not a configuration key");
              }
            });
      } catch (ConfigException e) {
        int line = e.origin() == null ? 1 : Math.max(e.origin().lineNumber(), 1);
        problems.add(
            page.at(offset + line) + ": the hocon block does not parse: " + e.getMessage());
      }
    }
    return problems;
  }

  /** The problems of an example configuration's keys, each as "file:line: key (why)". */
  public List<String> problems(Path root, Path file) {
    List<String> problems = new ArrayList<>();
    String name = root.relativize(file).toString();
    ConfigObject parsed = ConfigFactory.parseFile(file.toFile()).root();
    leaves(
        parsed,
        List.of(),
        (path, line) -> {
          if (!keys.knowsAbsolute(path)) {
            problems.add(
                name
                    + ":"
                    + line
                    + ": `"
                    + String.join(".", path)
                    + "` is not a configuration key");
          }
        });
    return problems;
  }

  /** Each value that is not a non-empty object, with its path and line, in key order. */
  private static void leaves(
      ConfigObject node, List<String> path, BiConsumer<List<String>, Integer> each) {
    for (Map.Entry<String, ConfigValue> e : new TreeMap<>(node).entrySet()) {
      List<String> child = new ArrayList<>(path);
      child.add(e.getKey());
      if (e.getValue() instanceof ConfigObject object && !object.isEmpty()) {
        leaves(object, child, each);
      } else {
        each.accept(child, e.getValue().origin().lineNumber());
      }
    }
  }
}
