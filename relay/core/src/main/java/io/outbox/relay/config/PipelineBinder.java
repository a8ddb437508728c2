package io.outbox.relay.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigOrigin;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import io.outbox.relay.config.PipelineSettings.Backoff;
import io.outbox.relay.config.PipelineSettings.CloudEventsMode;
import io.outbox.relay.config.PipelineSettings.CloudEventsSettings;
import io.outbox.relay.config.PipelineSettings.RetrySettings;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.DatabaseSettings.Partitions;
import io.outbox.relay.spi.DatabaseSettings.Retention;
import io.outbox.relay.spi.support.EventTemplate;
import io.outbox.relay.spi.support.SettingsReader;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Builds one pipeline's {@link PipelineSettings} from its merged settings (the pipeline's keys over
 * {@code pipeline-defaults}), recording every bad value; then lets the selected plug-ins check
 * their own subtrees ({@link PluginCheck}).
 */
final class PipelineBinder {

  /** {@code name} or {@code schema.name}, as the schema migrator accepts them. */
  private static final Pattern TABLE =
      Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

  private static final Pattern COLUMN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

  private static final Map<String, OnPublish> ON_PUBLISH = new LinkedHashMap<>();

  private static final Map<String, Boolean> LAYOUTS = new LinkedHashMap<>();

  private static final Duration MIN_RETENTION_INTERVAL = Duration.ofSeconds(1);

  private static final Map<String, CloudEventsMode> CLOUD_EVENTS_MODES = new LinkedHashMap<>();

  static {
    ON_PUBLISH.put("mark", OnPublish.MARK);
    ON_PUBLISH.put("delete", OnPublish.DELETE);
    ON_PUBLISH.put("position", OnPublish.POSITION);
    LAYOUTS.put("plain", Boolean.FALSE);
    LAYOUTS.put("partitioned", Boolean.TRUE);
    CLOUD_EVENTS_MODES.put("none", CloudEventsMode.NONE);
    CLOUD_EVENTS_MODES.put("binary", CloudEventsMode.BINARY);
    CLOUD_EVENTS_MODES.put("structured", CloudEventsMode.STRUCTURED);
  }

  private final Problems problems;
  private final PluginCheck plugins;
  private final SecretMasker secrets;

  PipelineBinder(Problems problems, Plugins plugins) {
    this.problems = problems;
    this.plugins = new PluginCheck(plugins, problems);
    this.secrets = plugins.secrets();
  }

  /**
   * The settings of pipeline {@code name}, or {@code null} when any of its values is bad (the
   * problems are recorded); {@code origin} is where the pipeline is written.
   */
  PipelineSettings bind(String name, Config merged, ConfigOrigin origin) {
    String path = "outbox-relay.pipelines." + ConfigUtil.joinPath(name);
    int before = problems.reported();
    SettingsReader r = new SettingsReader(merged, path, problems::add, origin, secrets::display);

    DatabaseSettings database = database(r, name);
    Integer lanes = r.intIn("lanes", 1, 1024);
    Integer batchSize = r.intIn("batch-size", 1, 10_000);
    String destination = template(r, "routing.destination", true);
    CloudEventsSettings cloudEvents = cloudEvents(r);
    String deadLetterDestination = template(r, "dead-letter.destination", false);
    RetrySettings retry = retry(r);
    Backoff reconnect = backoff(r, "sink.reconnect-backoff", "initial", "max");
    Duration stallTimeout = r.positiveDuration("stall-timeout");

    int lanesOrOne = lanes == null ? 1 : lanes;
    int batchOrOne = batchSize == null ? 1 : batchSize;
    String sourceType = r.requiredString("source.type", "the source plug-in");
    Config sourceSettings = pluginSettings(r, "source", sourceType);
    if (sourceType != null) {
      plugins.source(r, name, sourceType, sourceSettings, lanesOrOne, batchOrOne);
    }
    if (database != null
        && database.onPublish() == OnPublish.POSITION
        && sourceType != null
        && !sourceType.equals("polling")) {
      r.problem(
          "on-publish",
          "position needs source.type = polling; the "
              + sourceType
              + " source settles each row: use mark or delete");
    }
    String sinkType = r.requiredString("sink.type", "the sink plug-in");
    Config sinkSettings = pluginSettings(r, "sink", sinkType);
    if (sinkType != null) {
      plugins.sink(r, name, sinkType, sinkSettings, lanesOrOne, batchOrOne);
    }

    if (problems.reported() > before) {
      return null;
    }
    return new PipelineSettings(
        name,
        path,
        database,
        sourceType,
        sourceSettings,
        sinkType,
        sinkSettings,
        destination,
        cloudEvents,
        retry,
        reconnect,
        lanes,
        batchSize,
        deadLetterDestination,
        stallTimeout);
  }

  private DatabaseSettings database(SettingsReader r, String pipeline) {
    int before = problems.reported();
    String url =
        r.requiredString(
            "database.url",
            "the JDBC URL of the database holding the outbox,"
                + " e.g. \"jdbc:postgresql://127.0.0.1:5432/app\"");
    if (url != null && !url.startsWith("jdbc:postgresql:")) {
      r.problem(
          "database.url",
          "must be a PostgreSQL JDBC URL (jdbc:postgresql://host:port/database), not "
              + r.describe("database.url"));
    }
    String user = r.optionalString("database.user");
    String password = r.optionalString("database.password");
    Map<String, String> properties = r.stringMap("database.properties");
    String table = table(r, "table");
    String deadLetterTable = table(r, "dead-letter-table");
    if (table != null && table.equals(deadLetterTable)) {
      r.problem("dead-letter-table", "must differ from table, both are \"" + table + "\"");
    }
    Map<String, String> columns = columns(r);
    OnPublish onPublish = r.oneOf("on-publish", ON_PUBLISH);
    Retention retention = retention(r);
    Partitions partitions = partitions(r);
    if (problems.reported() > before) {
      return null;
    }
    return new DatabaseSettings(
        url,
        user,
        password,
        properties,
        table,
        deadLetterTable,
        onPublish,
        pipeline,
        retention,
        columns,
        partitions);
  }

  /** {@code layout} and, when partitioned, {@code partitions.*}. */
  private static Partitions partitions(SettingsReader r) {
    Boolean partitioned = r.oneOf("layout", LAYOUTS);
    Integer count = r.intIn("partitions.count", 2, 64);
    Integer size = r.intIn("partitions.size", 1_000, 1_000_000_000);
    if (partitioned == null || count == null || size == null) {
      return null;
    }
    return partitioned ? new Partitions(count, size) : Partitions.PLAIN;
  }

  /**
   * {@code columns.*}: the relay's event columns to the table's own names. The keys are
   * reference.conf's (unknown ones are refused there); the sources check the names against the
   * table at start-up.
   */
  private static Map<String, String> columns(SettingsReader r) {
    Map<String, String> columns = r.stringMap("columns");
    if (columns == null) {
      return null;
    }
    Map<String, String> keyOfColumn = new LinkedHashMap<>();
    columns.forEach(
        (key, column) -> {
          String path = "columns." + key;
          if (!COLUMN.matcher(column).matches()) {
            r.problem(
                path,
                "must be a column name, letters, digits and '_' not starting with a digit (at most"
                    + " 63), not "
                    + r.describe(path));
          } else if (keyOfColumn.putIfAbsent(column, key) != null) {
            r.problem(
                path,
                "\""
                    + column
                    + "\" is already the column of columns."
                    + keyOfColumn.get(column)
                    + "; each column holds one thing");
          }
        });
    return columns;
  }

  private static Retention retention(SettingsReader r) {
    Duration published = r.durationOrOff("retention.published", Duration.ofSeconds(1));
    Duration deadLetters = r.durationOrOff("retention.dead-letters", Duration.ofSeconds(1));
    Integer batchSize = r.intIn("retention.batch-size", 1, 100_000);
    Duration interval = r.positiveDuration("retention.interval");
    if (interval != null && interval.compareTo(MIN_RETENTION_INTERVAL) < 0) {
      r.problem(
          "retention.interval", "must be at least 1s, not " + r.describe("retention.interval"));
      return null;
    }
    if (published == null || deadLetters == null || batchSize == null || interval == null) {
      return null;
    }
    return new Retention(published, deadLetters, batchSize, interval);
  }

  private static String table(SettingsReader r, String key) {
    String table = r.requiredString(key, "a table name, \"name\" or \"schema.name\"");
    if (table != null && !TABLE.matcher(table).matches()) {
      r.problem(
          key,
          "must be \"name\" or \"schema.name\", each part letters, digits and '_' not starting"
              + " with a digit (at most 63), not "
              + r.describe(key));
      return null;
    }
    return table;
  }

  private static CloudEventsSettings cloudEvents(SettingsReader r) {
    CloudEventsMode mode = r.oneOf("cloudevents.mode", CLOUD_EVENTS_MODES);
    String source =
        template(
            r,
            "cloudevents.source",
            true,
            "a URI reference naming where events happen, may use ${aggregate_type} etc.");
    return mode == null || source == null ? null : new CloudEventsSettings(mode, source);
  }

  private static String template(SettingsReader r, String key, boolean required) {
    return template(r, key, required, "a topic or exchange name, may use ${aggregate_type} etc.");
  }

  private static String template(
      SettingsReader r, String key, boolean required, String description) {
    String template = required ? r.requiredString(key, description) : r.optionalString(key);
    if (template == null) {
      return null;
    }
    if (template.isBlank()) {
      r.problem(key, "must not be blank (use null for none)");
      return null;
    }
    var mistakes = EventTemplate.problems(template);
    if (!mistakes.isEmpty()) {
      r.problem(key, String.join("; ", mistakes));
      return null;
    }
    return template;
  }

  private static RetrySettings retry(SettingsReader r) {
    Integer maxAttempts = r.intIn("retry.max-attempts", 1, Integer.MAX_VALUE);
    Backoff backoff = backoff(r, "retry", "initial-backoff", "max-backoff");
    return maxAttempts == null || backoff == null ? null : new RetrySettings(maxAttempts, backoff);
  }

  private static Backoff backoff(SettingsReader r, String base, String initialKey, String maxKey) {
    Duration initial = r.positiveDuration(base + "." + initialKey);
    Duration max = r.positiveDuration(base + "." + maxKey);
    Double multiplier = r.doubleIn(base + ".multiplier", 1.0, Double.MAX_VALUE);
    Double jitter = r.doubleIn(base + ".jitter", 0.0, 1.0);
    if (initial != null && max != null && max.compareTo(initial) < 0) {
      r.problem(
          base + "." + maxKey,
          "must be >= "
              + initialKey
              + " ("
              + r.describe(base + "." + initialKey)
              + "), not "
              + r.describe(base + "." + maxKey));
      return null;
    }
    if (initial == null || max == null || multiplier == null || jitter == null) {
      return null;
    }
    return new Backoff(initial, max, multiplier, jitter);
  }

  /** The subtree {@code <kind>.<type>}; empty when the plug-in has no settings. */
  private static Config pluginSettings(SettingsReader r, String kind, String type) {
    if (type == null) {
      return ConfigFactory.empty();
    }
    String key = kind + "." + ConfigUtil.joinPath(type);
    ConfigValue v = r.raw(key);
    if (v instanceof ConfigObject o) {
      return o.toConfig();
    }
    if (v != null) {
      r.problem(key, "must be an object of " + kind + " settings, not " + r.describe(key));
    }
    return ConfigFactory.empty();
  }
}
