package io.outbox.connect;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.outbox.relay.config.ConfigProblemsException;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.config.Plugins;
import io.outbox.relay.config.RelayConfigLoader;
import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SettingsProblem;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkProvider;
import io.outbox.source.polling.PollingSourceProvider;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.errors.ConnectException;

/**
 * The connector's settings: the daemon's pipeline keys ({@code database.*}, {@code table}, {@code
 * source.polling.*}, {@code routing.destination}, {@code retry.*}, {@code lanes}, ...) under the
 * same names, with the defaults and comments of the daemon's {@code reference.conf}, bound and
 * validated by the daemon's own binder so that both accept and refuse exactly the same values.
 */
public final class ConnectorSettings {

  /** The pipeline name: lease names and log lines; defaults to the connector's name. */
  /** Connect's error tolerance of the connector's records (framework key). */
  static final String ERRORS_TOLERANCE = "errors.tolerance";

  /** Connect's transaction boundary of the connector (framework key, exactly-once workers). */
  static final String TRANSACTION_BOUNDARY = "transaction.boundary";

  public static final String PIPELINE = "pipeline";

  /**
   * The connector's own key (the daemon's Kafka sink learns the limit from the producer's refusal):
   * the largest record it hands the worker. A larger one is dead-lettered instead, because a record
   * the producer or the broker refuses fails the task, which stops its lanes until it is restarted,
   * and fails it again.
   */
  static final String MAX_RECORD_BYTES = "max-record-bytes";

  /** Kafka's defaults of the producer's max.request.size and the broker's message.max.bytes. */
  static final int DEFAULT_MAX_RECORD_BYTES = 1_048_576;

  /** Set by the connector for each task: the lanes it claims, comma-separated. */
  static final String TASK_LANES = "outbox.task.lanes";

  /** Set by the connector for each task: its index among the connector's tasks. */
  static final String TASK_INDEX = "outbox.task.index";

  static final String DATABASE_PROPERTIES = "database.properties.";

  static final String SOURCE_PATH = "source.polling";

  private static final String DEFAULTS = "outbox-relay.pipeline-defaults";
  private static final String PIPELINES = "outbox-relay.pipelines";

  /**
   * Keys of the daemon's pipeline that the connector does not take: Connect produces the records
   * (no sink settings), the source is always polling, and Connect restarts failed tasks itself.
   */
  private static final List<String> NOT_MAPPED =
      List.of("sink.", "source.type", "source.cdc.", "stall-timeout", "database.properties");

  private static final Set<String> SECRETS = Set.of("database.password");

  private ConnectorSettings() {}

  /** The keys Connect shows and validates, with the reference defaults and documentation. */
  public static ConfigDef configDef() {
    ConfigDef def = new ConfigDef();
    def.define(
        PIPELINE,
        ConfigDef.Type.STRING,
        null,
        ConfigDef.Importance.HIGH,
        "The pipeline name: the daemon's outbox-relay.pipelines.<name>. Defaults to the"
            + " connector's name.");
    def.define(
        MAX_RECORD_BYTES,
        ConfigDef.Type.STRING,
        Integer.toString(DEFAULT_MAX_RECORD_BYTES),
        ConfigDef.Importance.MEDIUM,
        "The largest record, in bytes (key, value and headers as the StringConverter and"
            + " ByteArrayConverter write them, plus Kafka's batch overhead), that the connector"
            + " hands the worker; a larger event is dead-lettered (permanent) instead of failing"
            + " the task. At most the smaller of the worker's producer max.request.size and the"
            + " topics' max.message.bytes; both default to 1048576.");
    Config defaults = reference().getConfig(DEFAULTS);
    for (Map.Entry<String, ConfigValue> e : flatten(defaults).entrySet()) {
      String key = e.getKey();
      if (!mapped(key)) {
        continue;
      }
      ConfigValue value = e.getValue();
      Object dflt =
          value.valueType() == ConfigValueType.NULL ? null : String.valueOf(value.unwrapped());
      String doc = String.join(" ", value.origin().comments()).trim();
      def.define(
          key,
          SECRETS.contains(key) ? ConfigDef.Type.PASSWORD : ConfigDef.Type.STRING,
          dflt,
          key.startsWith("database.") || key.equals("table")
              ? ConfigDef.Importance.HIGH
              : ConfigDef.Importance.MEDIUM,
          doc.isEmpty() ? "See the daemon's reference.conf: " + key : doc);
    }
    return def;
  }

  /** Whether a pipeline key (relative to the pipeline) is a connector setting. */
  static boolean mapped(String key) {
    for (String prefix : NOT_MAPPED) {
      if (key.equals(prefix) || key.startsWith(prefix)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Binds the connector's properties with the daemon's binder.
   *
   * @param connectorName the connector's {@code name}, the pipeline name unless {@code pipeline} is
   *     set
   * @return the pipeline, or the problems, each on the connector key it is about
   */
  public static Bound bind(Map<String, String> props, String connectorName) {
    String pipeline = props.getOrDefault(PIPELINE, connectorName);
    if (pipeline == null || pipeline.isBlank()) {
      pipeline = "outbox";
    }
    Map<String, Object> user = new LinkedHashMap<>();
    String base = PIPELINES + "." + ConfigUtil.quoteString(pipeline) + ".";
    ConfigDef def = configDef();
    for (Map.Entry<String, String> e : props.entrySet()) {
      String key = e.getKey();
      if (e.getValue() == null) {
        continue;
      }
      if (key.startsWith(DATABASE_PROPERTIES)) {
        String name = key.substring(DATABASE_PROPERTIES.length());
        user.put(base + "database.properties." + ConfigUtil.quoteString(name), e.getValue());
      } else if (def.configKeys().containsKey(key)
          && !key.equals(PIPELINE)
          && !key.equals(MAX_RECORD_BYTES)) {
        user.put(base + key, e.getValue());
      }
    }
    user.put(base + "source.type", PollingSourceProvider.TYPE);
    user.put(base + "sink.type", WorkerProduces.TYPE);
    Config config = ConfigFactory.parseMap(user, "connector " + connectorName);
    ClassLoader cl = ConnectorSettings.class.getClassLoader();
    RelayConfigLoader loader =
        new RelayConfigLoader(
            Map.of(),
            cl,
            Plugins.of(List.of(new PollingSourceProvider()), List.of(new WorkerProduces())));
    try {
      PipelineSettings settings =
          loader.load(config, "connector " + connectorName).settings().pipelines().get(pipeline);
      List<Problem> framework = frameworkProblems(props);
      return framework.isEmpty() ? new Bound(settings, List.of()) : new Bound(null, framework);
    } catch (ConfigProblemsException e) {
      List<Problem> problems = new ArrayList<>(frameworkProblems(props));
      String prefix = PIPELINES + "." + pipeline + ".";
      String quotedPrefix = base;
      for (SettingsProblem p : e.problems()) {
        String path = p.path();
        String key =
            path.startsWith(prefix)
                ? path.substring(prefix.length())
                : path.startsWith(quotedPrefix) ? path.substring(quotedPrefix.length()) : path;
        problems.add(new Problem(connectorKey(key, def), p.message()));
      }
      return new Bound(null, List.copyOf(problems));
    }
  }

  /** Connect's own keys the connector cannot work with, and the connector's own keys. */
  private static List<Problem> frameworkProblems(Map<String, String> props) {
    List<Problem> problems = new ArrayList<>();
    String tolerance = props.get(ERRORS_TOLERANCE);
    String boundary = props.get(TRANSACTION_BOUNDARY);
    if (tolerance != null
        && tolerance.strip().equalsIgnoreCase("all")
        && boundary != null
        && boundary.strip().equalsIgnoreCase("connector")) {
      problems.add(
          new Problem(
              ERRORS_TOLERANCE,
              "must be none with transaction.boundary = connector: with all, the worker skips a"
                  + " record it could not convert and commits its batch's offset, which the lane's"
                  + " next owner takes for a delivery. A record Kafka refuses aborts the batch's"
                  + " transaction either way"));
    }
    String onPublish = props.get("on-publish");
    if (onPublish != null && onPublish.strip().equals("position")) {
      problems.add(
          new Problem(
              "on-publish",
              "position is not available in the connector yet (the daemon's polling source"
                  + " settles by position): use mark or delete"));
    }
    try {
      maxRecordBytes(props);
    } catch (IllegalArgumentException e) {
      problems.add(new Problem(MAX_RECORD_BYTES, e.getMessage()));
    }
    return problems;
  }

  /**
   * The {@code max-record-bytes} of these properties.
   *
   * @throws IllegalArgumentException when it is not a whole number of at least 1024
   */
  static int maxRecordBytes(Map<String, String> props) {
    String value = props.get(MAX_RECORD_BYTES);
    if (value == null || value.isBlank()) {
      return DEFAULT_MAX_RECORD_BYTES;
    }
    int bytes;
    try {
      bytes = Integer.parseInt(value.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "must be a whole number of bytes (at least 1024), not '" + value + "'");
    }
    if (bytes < 1024) {
      throw new IllegalArgumentException(
          "must be at least 1024 bytes (a record's headers alone take a few hundred), not "
              + bytes);
    }
    return bytes;
  }

  /**
   * Binds the properties Connect gives the connector or a task.
   *
   * @throws ConnectException naming every bad key
   */
  static PipelineSettings bindOrThrow(Map<String, String> props) {
    Bound bound = bind(props, props.get("name"));
    if (!bound.problems().isEmpty()) {
      throw new ConnectException(
          "invalid outbox-relay connector settings: "
              + bound.problems().stream().map(Object::toString).collect(Collectors.joining("; ")));
    }
    return bound.pipeline();
  }

  /** The connector key a problem of the pipeline key {@code key} is shown on. */
  private static String connectorKey(String key, ConfigDef def) {
    if (key.startsWith("database.properties.")) {
      return key.replace("\"", "");
    }
    String k = key;
    while (true) {
      if (def.configKeys().containsKey(k)) {
        return k;
      }
      int dot = k.lastIndexOf('.');
      if (dot < 0) {
        return PIPELINE;
      }
      k = k.substring(0, dot);
    }
  }

  private static Config reference() {
    return ConfigFactory.defaultReference(ConnectorSettings.class.getClassLoader());
  }

  private static Map<String, ConfigValue> flatten(Config config) {
    Map<String, ConfigValue> out = new java.util.TreeMap<>();
    // entrySet() leaves out nulls; walk the object tree to keep keys whose default is null.
    walk("", config.root(), out);
    return out;
  }

  private static void walk(
      String prefix, com.typesafe.config.ConfigObject object, Map<String, ConfigValue> out) {
    for (Map.Entry<String, ConfigValue> e : object.entrySet()) {
      String key = prefix + e.getKey();
      if (e.getValue() instanceof com.typesafe.config.ConfigObject child && !child.isEmpty()) {
        walk(key + ".", child, out);
      } else if (!(e.getValue() instanceof com.typesafe.config.ConfigObject)) {
        out.put(key, e.getValue());
      }
    }
  }

  /**
   * The outcome of {@link #bind}.
   *
   * @param pipeline the bound pipeline, or {@code null} when there are problems
   * @param problems every problem, each naming its connector key
   */
  public record Bound(PipelineSettings pipeline, List<Problem> problems) {}

  /** One bad setting: the connector key and what is wrong with it. */
  public record Problem(String key, String message) {
    @Override
    public String toString() {
      return key + ": " + message;
    }
  }

  /**
   * Stands for the daemon's {@code sink.type}: in the connector the Connect worker produces the
   * records, so there is nothing to validate or create.
   */
  static final class WorkerProduces implements SinkProvider {
    static final String TYPE = "kafka-connect-worker";

    @Override
    public String type() {
      return TYPE;
    }

    @Override
    public List<SettingsProblem> validate(PluginContext context) {
      return List.of();
    }

    @Override
    public Sink create(PluginContext context) {
      throw new UnsupportedOperationException("the Connect worker produces the records");
    }
  }
}
