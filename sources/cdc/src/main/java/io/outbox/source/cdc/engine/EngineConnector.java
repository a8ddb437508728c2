package io.outbox.source.cdc.engine;

import io.debezium.connector.postgresql.PostgresConnector;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectorContext;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * Debezium's PostgreSQL connector whose tasks are {@link EngineTask}s, so that the relay's session
 * owns every call into them. The engine instantiates it by name ({@code connector.class}), hence
 * public.
 */
public final class EngineConnector extends SourceConnector {

  private final PostgresConnector connector = new PostgresConnector();

  /** For the engine, which instantiates connectors by class. */
  public EngineConnector() {}

  @Override
  public String version() {
    return connector.version();
  }

  @Override
  public void initialize(ConnectorContext context) {
    super.initialize(context);
    connector.initialize(context);
  }

  @Override
  public void initialize(ConnectorContext context, List<Map<String, String>> taskConfigs) {
    super.initialize(context, taskConfigs);
    connector.initialize(context, taskConfigs);
  }

  @Override
  public void start(Map<String, String> props) {
    connector.start(props);
  }

  @Override
  public Class<? extends Task> taskClass() {
    return EngineTask.class;
  }

  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    return connector.taskConfigs(maxTasks);
  }

  @Override
  public void stop() {
    connector.stop();
  }

  @Override
  public Config validate(Map<String, String> props) {
    return connector.validate(props);
  }

  @Override
  public ConfigDef config() {
    return connector.config();
  }

  @Override
  public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> props) {
    return connector.exactlyOnceSupport(props);
  }
}
