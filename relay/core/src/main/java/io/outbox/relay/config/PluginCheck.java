package io.outbox.relay.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.SinkProvider;
import io.outbox.relay.spi.SourceProvider;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.support.SettingsReader;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Checks that a pipeline's {@code source.type} and {@code sink.type} name installed plug-ins, then
 * asks each selected plug-in to check its own subtree ({@code validate(PluginContext)}).
 */
final class PluginCheck {

  /**
   * The project's own plug-ins that an installation may lack, and where they are: the slim
   * distribution leaves the CDC source (and Debezium), the NATS and the Redis sinks out.
   */
  private static final Map<String, String> ELSEWHERE =
      Map.of(
          "source cdc", elsewhere("cdc source"),
          "sink nats", elsewhere("nats sink"),
          "sink redis", elsewhere("redis sink"));

  private static String elsewhere(String plugin) {
    return ". The "
        + plugin
        + " is not installed here: the slim distribution (outbox-relay-slim-<version>) leaves it"
        + " out; the full one (outbox-relay-<version>) has it";
  }

  private final Plugins plugins;
  private final Problems problems;

  PluginCheck(Plugins plugins, Problems problems) {
    this.plugins = plugins;
    this.problems = problems;
  }

  void source(
      SettingsReader r, String pipeline, String type, Config settings, int lanes, int batchSize) {
    SourceProvider provider = plugins.source(type).orElse(null);
    check(
        r,
        "source",
        type,
        plugins.sourceTypes(),
        provider == null ? null : provider::validate,
        context(r, "source", pipeline, type, settings, lanes, batchSize));
  }

  void sink(
      SettingsReader r, String pipeline, String type, Config settings, int lanes, int batchSize) {
    SinkProvider provider = plugins.sink(type).orElse(null);
    check(
        r,
        "sink",
        type,
        plugins.sinkTypes(),
        provider == null ? null : provider::validate,
        context(r, "sink", pipeline, type, settings, lanes, batchSize));
  }

  private static PluginContext context(
      SettingsReader r,
      String kind,
      String pipeline,
      String type,
      Config settings,
      int lanes,
      int batchSize) {
    String path = r.path(kind + "." + ConfigUtil.joinPath(type));
    return new PluginContext(
        pipeline, settings, path, lanes, batchSize, Clock.systemUTC(), Ticker.SYSTEM, role -> {});
  }

  private void check(
      SettingsReader r,
      String kind,
      String type,
      Set<String> known,
      Function<PluginContext, List<SettingsProblem>> validate,
      PluginContext context) {
    if (validate == null) {
      r.problem(
          kind + ".type",
          "unknown "
              + kind
              + " type \""
              + type
              + "\"; "
              + (known.isEmpty()
                  ? "no " + kind + " plug-in is installed"
                  : "known: " + String.join(", ", known))
              + ELSEWHERE.getOrDefault(kind + " " + type, ""));
      return;
    }
    List<SettingsProblem> found;
    try {
      found = validate.apply(context);
    } catch (ConfigException e) {
      // A plug-in that read a bad value without checking it first: still the user's mistake.
      problems.add(context.path(), oneLine(e.getMessage()), e.origin());
      return;
    } catch (RuntimeException e) {
      problems.add(
          context.path(),
          "the " + kind + " plug-in \"" + type + "\" failed to check its settings: " + e,
          null);
      return;
    }
    String prefix = r.path("");
    for (SettingsProblem p : found) {
      if (p.origin() != null) {
        problems.add(p);
        continue;
      }
      // A missing value or a plug-in default: the pipeline's object in the user's file.
      ConfigValue v =
          p.path().startsWith(prefix) ? r.raw(p.path().substring(prefix.length())) : null;
      problems.add(p.path(), p.message(), r.origin(v));
    }
  }

  private static String oneLine(String s) {
    return s == null ? "" : s.replaceAll("\\s+", " ").strip();
  }
}
