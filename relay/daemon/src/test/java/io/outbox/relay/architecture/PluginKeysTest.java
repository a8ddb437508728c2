package io.outbox.relay.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SinkProvider;
import io.outbox.relay.spi.SourceProvider;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.support.SettingsSinkProvider;
import io.outbox.relay.spi.support.SettingsSourceProvider;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each plug-in key is declared once: its name and type by the one {@code read} of the plug-in's
 * settings, its default and the sentence that documents it in the plug-in's {@code reference.conf}.
 * This keeps the two equal: a key in the file that {@code read} never looks at (a default that
 * documents nothing), a key {@code read} looks at that the file lacks (a key without a default or
 * documentation), and a key without its comment all fail.
 */
class PluginKeysTest {

  static Stream<Arguments> plugins() {
    List<Arguments> all = new ArrayList<>();
    for (SinkProvider p : ServiceLoader.load(SinkProvider.class)) {
      if (p instanceof SettingsSinkProvider<?> s) {
        all.add(Arguments.of("sink", s.type(), (Function<PluginContext, Set<String>>) s::keys));
      }
    }
    for (SourceProvider p : ServiceLoader.load(SourceProvider.class)) {
      if (p instanceof SettingsSourceProvider<?> s) {
        all.add(Arguments.of("source", s.type(), (Function<PluginContext, Set<String>>) s::keys));
      }
    }
    // The project's four sinks and two sources: a provider that stops being found fails here too.
    assertThat(all).hasSize(6);
    return all.stream();
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("plugins")
  void readDeclaresExactlyTheKeysOfReferenceConf(
      String kind, String type, Function<PluginContext, Set<String>> keys) {
    String path = "outbox-relay.pipeline-defaults." + kind + "." + type;
    Config defaults = ConfigFactory.defaultReference().getConfig(path);
    Set<String> looked =
        keys.apply(
            new PluginContext(
                "orders", defaults, path, 2, 100, Clock.systemUTC(), Ticker.SYSTEM, r -> {}));

    Set<String> inFile = new TreeSet<>();
    leaves(defaults.root(), "", inFile);
    Set<String> undocumented = new TreeSet<>();
    for (String key : looked) {
      ConfigValue v = value(defaults, key);
      if (v != null && v.origin().comments().isEmpty()) {
        undocumented.add(key);
      }
    }

    assertThat(notCovered(inFile, looked)).as("keys in reference.conf that read ignores").isEmpty();
    assertThat(looked.stream().filter(k -> !defaults.hasPathOrNull(k)))
        .as("keys read looks up that reference.conf lacks")
        .isEmpty();
    assertThat(undocumented).as("keys without a comment in reference.conf").isEmpty();
  }

  /** The keys of the file no looked-up key names, itself or as an object above it. */
  private static Set<String> notCovered(Set<String> inFile, Set<String> looked) {
    Set<String> left = new TreeSet<>();
    for (String key : inFile) {
      if (looked.stream().noneMatch(k -> key.equals(k) || key.startsWith(k + "."))) {
        left.add(key);
      }
    }
    return left;
  }

  private static void leaves(ConfigObject o, String prefix, Set<String> out) {
    for (Map.Entry<String, ConfigValue> e : o.entrySet()) {
      String key = prefix + ConfigUtil.joinPath(e.getKey());
      if (e.getValue() instanceof ConfigObject child && !child.isEmpty()) {
        leaves(child, key + ".", out);
      } else {
        out.add(key);
      }
    }
  }

  /** The value at {@code key}, explicit nulls included; {@code null} when absent. */
  private static ConfigValue value(Config config, String key) {
    ConfigValue v = config.root();
    for (String segment : ConfigUtil.splitPath(key)) {
      v = v instanceof ConfigObject o ? o.get(segment) : null;
    }
    return v;
  }
}
