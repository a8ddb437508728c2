package io.outbox.connect;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * The relay's polling source as a Kafka Connect source connector: the pipeline's lanes are spread
 * over at most {@code tasks.max} tasks ({@link OutboxSourceTask}), each claiming only its lanes
 * under the daemon's lane locks. Configured with the daemon's pipeline keys ({@link
 * ConnectorSettings}).
 */
public final class OutboxSourceConnector extends SourceConnector {

  private Map<String, String> props;
  private int lanes;

  @Override
  public String version() {
    return Version.VERSION;
  }

  @Override
  public void start(Map<String, String> props) {
    this.lanes = ConnectorSettings.bindOrThrow(props).lanes();
    this.props = Map.copyOf(props);
  }

  @Override
  public Class<? extends Task> taskClass() {
    return OutboxSourceTask.class;
  }

  /** Lane {@code l} goes to task {@code l % tasks}; never more tasks than lanes. */
  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    int tasks = Math.max(1, Math.min(maxTasks, lanes));
    List<Map<String, String>> configs = new ArrayList<>(tasks);
    for (int t = 0; t < tasks; t++) {
      List<String> mine = new ArrayList<>();
      for (int lane = t; lane < lanes; lane += tasks) {
        mine.add(Integer.toString(lane));
      }
      Map<String, String> config = new HashMap<>(props);
      config.put(ConnectorSettings.TASK_LANES, String.join(",", mine));
      config.put(ConnectorSettings.TASK_INDEX, Integer.toString(t));
      configs.add(config);
    }
    return configs;
  }

  @Override
  public void stop() {}

  @Override
  public ConfigDef config() {
    return ConnectorSettings.configDef();
  }

  /**
   * Connect's own checks of each key, then the daemon's binder: every problem on the key it is
   * about, all at once.
   */
  @Override
  public Config validate(Map<String, String> connectorConfigs) {
    Config config = super.validate(connectorConfigs);
    Map<String, ConfigValue> byName = new HashMap<>();
    for (ConfigValue v : config.configValues()) {
      byName.put(v.name(), v);
    }
    ConnectorSettings.Bound bound =
        ConnectorSettings.bind(connectorConfigs, connectorConfigs.get("name"));
    for (ConnectorSettings.Problem p : bound.problems()) {
      ConfigValue value = byName.get(p.key());
      if (value == null) {
        value = new ConfigValue(p.key());
        byName.put(p.key(), value);
        config.configValues().add(value);
      }
      value.addErrorMessage(p.message());
    }
    return config;
  }

  /** Every batch is one transaction when the worker runs exactly-once source support. */
  @Override
  public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
    return ExactlyOnceSupport.SUPPORTED;
  }

  /** With {@code transaction.boundary = connector}, a transaction per claimed batch. */
  @Override
  public ConnectorTransactionBoundaries canDefineTransactionBoundaries(
      Map<String, String> connectorConfig) {
    return ConnectorTransactionBoundaries.SUPPORTED;
  }
}
