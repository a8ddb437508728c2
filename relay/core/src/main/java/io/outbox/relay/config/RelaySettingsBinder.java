package io.outbox.relay.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import io.outbox.relay.config.RelaySettings.HttpSettings;
import io.outbox.relay.config.RelaySettings.TracingSettings;
import io.outbox.relay.spi.support.BrokerUrls;
import io.outbox.relay.spi.support.SettingsReader;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Builds {@link RelaySettings} from the resolved {@code outbox-relay} subtree: checks every key
 * against the reference, reads the daemon-wide settings, merges {@code pipeline-defaults} under
 * each pipeline and binds it. Every problem is collected before anything is thrown.
 */
final class RelaySettingsBinder {

  private static final String ROOT = "outbox-relay";
  private static final Pattern PIPELINE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]*");

  private final Plugins plugins;
  private final ConfigObject reference;

  /**
   * @param plugins the installed plug-ins
   * @param reference the reference {@code outbox-relay} subtree (every {@code reference.conf})
   */
  RelaySettingsBinder(Plugins plugins, ConfigObject reference) {
    this.plugins = plugins;
    this.reference = reference;
  }

  /**
   * Binds {@code relay}, recording problems into {@code problems}.
   *
   * @return the loaded config, or {@code null} when there were problems
   */
  LoadedConfig bind(Config relay, String source, Problems problems) {
    UnknownKeyCheck keys = new UnknownKeyCheck(problems, reference);
    keys.checkRoot(relay.root().withoutKey("pipelines"), reference.withoutKey("pipelines"), ROOT);

    SettingsReader r =
        new SettingsReader(relay, ROOT, problems::add, null, plugins.secrets()::display);
    String host = r.requiredString("http.host", "the interface the HTTP endpoints bind to");
    Integer port = r.intIn("http.port", 0, 65_535);
    Duration backlogInterval = r.positiveDuration("http.backlog-interval");
    Duration shutdownTimeout = r.positiveDuration("shutdown-timeout");
    TracingSettings tracing = tracing(r);

    ConfigObject defaults =
        relay.root().get("pipeline-defaults") instanceof ConfigObject o
            ? o
            : (ConfigObject) reference.get("pipeline-defaults");
    Map<String, PipelineSettings> pipelines = new LinkedHashMap<>();
    Config effective = relay.withoutPath("pipeline-defaults").withoutPath("pipelines");
    PipelineBinder binder = new PipelineBinder(problems, plugins);
    for (Map.Entry<String, ConfigObject> e : pipelines(r, problems).entrySet()) {
      String name = e.getKey();
      String path = ROOT + ".pipelines." + ConfigUtil.joinPath(name);
      Config merged = e.getValue().toConfig().withFallback(defaults);
      // Only the pipeline's own keys: those merged from pipeline-defaults were checked there.
      keys.checkPipeline(e.getValue(), (ConfigObject) reference.get("pipeline-defaults"), path);
      PipelineSettings settings = binder.bind(name, merged, e.getValue().origin());
      if (settings != null) {
        pipelines.put(name, settings);
      }
      effective = effective.withValue("pipelines." + ConfigUtil.joinPath(name), merged.root());
    }
    checkSharedOutboxes(pipelines, problems, relay);

    if (!problems.isEmpty()) {
      return null;
    }
    return new LoadedConfig(
        source,
        new RelaySettings(
            new HttpSettings(host, port, backlogInterval), tracing, shutdownTimeout, pipelines),
        effective,
        plugins.secrets());
  }

  /** {@code tracing}: whether, where to and as which service spans are exported. */
  private static TracingSettings tracing(SettingsReader r) {
    Boolean enabled = r.bool("tracing.enabled");
    String endpoint = r.checked("tracing.otlp-endpoint", RelaySettingsBinder::otlpEndpointProblem);
    String service = r.requiredString("tracing.service-name", "the service.name of the spans");
    if (enabled == null || endpoint == null || service == null) {
      return null;
    }
    return new TracingSettings(enabled, URI.create(endpoint.strip()), service);
  }

  /** Why {@code url} is no OTLP/HTTP endpoint, or {@code null} when it is one. */
  private static String otlpEndpointProblem(String url) {
    String example = "http://otel-collector:4318";
    try {
      URI parsed = new URI(url.strip());
      String problem =
          BrokerUrls.schemeOrHostProblem(parsed, List.of("http", "https"), example, url);
      if (problem == null && (parsed.getQuery() != null || parsed.getFragment() != null)) {
        problem = "must be a base URL without query or fragment (" + example + "), got " + url;
      }
      return problem == null ? null : "an OTLP/HTTP endpoint " + problem;
    } catch (URISyntaxException e) {
      return "must be an OTLP/HTTP URL (" + example + "), got " + url + ": " + e.getReason();
    }
  }

  /** The pipeline objects in the order they were written; bad names and non-objects reported. */
  private static Map<String, ConfigObject> pipelines(SettingsReader r, Problems problems) {
    ConfigValue value = r.raw("pipelines");
    if (!(value instanceof ConfigObject all)) {
      r.problem(
          "pipelines", "must be an object of pipelines by name, not " + r.describe("pipelines"));
      return Map.of();
    }
    if (all.isEmpty()) {
      r.problem(
          "pipelines",
          "no pipeline is configured; define at least one, e.g."
              + " outbox-relay.pipelines.orders.database.url = \"jdbc:postgresql://host/db\"");
      return Map.of();
    }
    List<Map.Entry<String, ConfigValue>> entries = new ArrayList<>(all.entrySet());
    // A pipeline only the environment defines (no file) comes after those of the file.
    entries.sort(
        Comparator.comparing(
                (Map.Entry<String, ConfigValue> e) -> e.getValue().origin().filename(),
                Comparator.nullsLast(Comparator.naturalOrder()))
            .thenComparingInt(e -> e.getValue().origin().lineNumber())
            .thenComparing(Map.Entry::getKey));
    Map<String, ConfigObject> out = new LinkedHashMap<>();
    for (Map.Entry<String, ConfigValue> e : entries) {
      String name = e.getKey();
      String key = "pipelines." + ConfigUtil.joinPath(name);
      if (!PIPELINE_NAME.matcher(name).matches()) {
        problems.add(
            r.path(key),
            "a pipeline name is letters, digits, '-' and '_', not \"" + name + "\"",
            e.getValue().origin());
      } else if (e.getValue() instanceof ConfigObject o) {
        out.put(name, o);
      } else {
        r.problem(key, "must be an object of pipeline settings, not " + r.describe(key));
      }
    }
    return out;
  }

  /** Two pipelines on one outbox table would publish every event twice. */
  private static void checkSharedOutboxes(
      Map<String, PipelineSettings> pipelines, Problems problems, Config relay) {
    Map<String, String> seen = new LinkedHashMap<>();
    for (PipelineSettings p : pipelines.values()) {
      String table = p.database().table();
      String outbox = p.database().url() + " " + (table.contains(".") ? table : "public." + table);
      String other = seen.putIfAbsent(outbox, p.name());
      if (other != null) {
        String key = "pipelines." + ConfigUtil.joinPath(p.name()) + ".table";
        problems.add(
            ROOT + "." + key,
            "pipelines \""
                + other
                + "\" and \""
                + p.name()
                + "\" read the same outbox table \""
                + table
                + "\" of the same database; each event would be published twice",
            ((ConfigObject) relay.root().get("pipelines")).get(p.name()).origin());
      }
    }
  }
}
