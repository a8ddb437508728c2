package io.outbox.relay.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Renders the effective settings as HOCON: every default merged into each pipeline, secrets shown
 * as {@value SecretMasker#MASK}, and only the selected plug-ins' subtrees ({@code source.<type>},
 * {@code sink.<type>}) kept, so that what is shown is what runs.
 */
public final class EffectiveSettingsPrinter {

  private static final ConfigRenderOptions HOCON =
      ConfigRenderOptions.defaults()
          .setOriginComments(false)
          .setComments(false)
          .setJson(false)
          .setFormatted(true);

  private EffectiveSettingsPrinter() {}

  /** The effective settings of {@code loaded}, ending with a newline. */
  public static String render(LoadedConfig loaded) {
    Config effective = loaded.effective();
    for (PipelineSettings p : loaded.settings().pipelines().values()) {
      String key = "pipelines." + ConfigUtil.joinPath(p.name());
      ConfigObject pipeline = effective.getObject(key);
      pipeline = onlySelected(pipeline, "source", p.sourceType());
      pipeline = onlySelected(pipeline, "sink", p.sinkType());
      effective = effective.withValue(key, pipeline);
    }
    ConfigObject masked = SecretMasker.mask(effective.root(), "outbox-relay");
    String body =
        ConfigValueFactory.fromMap(Map.of("outbox-relay", masked)).toConfig().root().render(HOCON);
    String header =
        "# Effective settings"
            + (loaded.source() == null ? "" : " of " + loaded.source())
            + ": defaults merged into every pipeline, secrets masked.\n";
    return header + (body.endsWith("\n") ? body : body + "\n");
  }

  /**
   * {@code source} (or {@code sink}) without the subtrees of plug-ins that are not selected; the
   * plain values and the pipeline's own {@code sink.reconnect-backoff} stay.
   */
  private static ConfigObject onlySelected(ConfigObject pipeline, String kind, String type) {
    if (!(pipeline.get(kind) instanceof ConfigObject settings)) {
      return pipeline;
    }
    Map<String, ConfigValue> kept = new LinkedHashMap<>();
    for (Map.Entry<String, ConfigValue> e : settings.entrySet()) {
      boolean pluginSubtree =
          e.getValue() instanceof ConfigObject && !e.getKey().equals("reconnect-backoff");
      if (!pluginSubtree || e.getKey().equals(type)) {
        kept.put(e.getKey(), e.getValue());
      }
    }
    return pipeline.withValue(kind, ConfigValueFactory.fromMap(kept).withOrigin(settings.origin()));
  }
}
