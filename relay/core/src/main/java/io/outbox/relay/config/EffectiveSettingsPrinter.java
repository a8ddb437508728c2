package io.outbox.relay.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigList;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Renders the effective settings as HOCON: every default merged into each pipeline, secrets shown
 * as {@value SecretMasker#MASK}, and only the selected plug-ins' subtrees ({@code source.<type>},
 * {@code sink.<type>}) kept, so that what is shown is what runs. Each value is followed by a
 * comment saying where it came from ({@link SettingOrigin}): the output stays valid HOCON. Keys are
 * sorted; pipelines come last, in the order of the file.
 */
public final class EffectiveSettingsPrinter {

  private static final String INDENT = "  ";

  private EffectiveSettingsPrinter() {}

  /** The effective settings of {@code loaded}, ending with a newline. */
  public static String render(LoadedConfig loaded) {
    Config effective = loaded.effective();
    StringBuilder sb = new StringBuilder();
    sb.append("# Effective settings");
    if (loaded.source() != null) {
      sb.append(" of ").append(loaded.source());
    }
    sb.append(": defaults merged into every pipeline, secrets masked.\n");
    sb.append(
        "# After each value, where it came from: file:line, env VARIABLE, or default:"
            + " reference.conf:line of the module.\n");
    sb.append("outbox-relay {\n");
    SecretMasker secrets = loaded.secrets();
    ConfigObject masked = secrets.mask(effective.root().withoutKey("pipelines"), "outbox-relay");
    renderMembers(masked, 1, sb);
    sb.append(INDENT).append("pipelines {\n");
    for (PipelineSettings p : loaded.settings().pipelines().values()) {
      ConfigObject pipeline = effective.getObject("pipelines." + ConfigUtil.joinPath(p.name()));
      pipeline = onlySelected(pipeline, "source", p.sourceType());
      pipeline = onlySelected(pipeline, "sink", p.sinkType());
      renderEntry(p.name(), secrets.mask(pipeline, p.path()), 2, sb);
    }
    sb.append(INDENT).append("}\n");
    sb.append("}\n");
    return sb.toString();
  }

  private static void renderMembers(ConfigObject object, int depth, StringBuilder sb) {
    for (String key : new TreeSet<>(object.keySet())) {
      renderEntry(key, object.get(key), depth, sb);
    }
  }

  private static void renderEntry(String key, ConfigValue value, int depth, StringBuilder sb) {
    sb.append(INDENT.repeat(depth)).append(ConfigUtil.joinPath(key));
    if (value instanceof ConfigObject object) {
      if (object.isEmpty()) {
        sb.append(" { }\n");
      } else {
        sb.append(" {\n");
        renderMembers(object, depth + 1, sb);
        sb.append(INDENT.repeat(depth)).append("}\n");
      }
    } else {
      sb.append(" = ")
          .append(scalar(value))
          .append("  # ")
          .append(SettingOrigin.describe(value.origin()))
          .append('\n');
    }
  }

  private static String scalar(ConfigValue value) {
    return switch (value.valueType()) {
      case STRING -> ConfigUtil.quoteString((String) value.unwrapped());
      case NULL -> "null";
      case LIST -> {
        List<String> items = new ArrayList<>();
        for (ConfigValue item : (ConfigList) value) {
          items.add(
              item instanceof ConfigObject
                  ? item.render(ConfigRenderOptions.concise())
                  : scalar(item));
        }
        yield "[" + String.join(", ", items) + "]";
      }
      default -> String.valueOf(value.unwrapped()); // NUMBER (2.0 stays 2.0), BOOLEAN
    };
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
