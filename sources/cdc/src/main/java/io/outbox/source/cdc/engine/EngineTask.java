package io.outbox.source.cdc.engine;

import io.debezium.connector.postgresql.PostgresConnectorTask;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.SourceTaskContext;

/**
 * Debezium's PostgreSQL connector task, with every {@code start} and {@code poll} passing the
 * session's {@link TaskGate}: once the session stopped the engine, no call reaches the connector
 * again (a poll would restart a connector stopped after a retriable error, and reconnect to the
 * slot). Public only because the engine instantiates it by name ({@link EngineConnector}).
 */
public final class EngineTask extends SourceTask {

  private final PostgresConnectorTask connector = new PostgresConnectorTask();
  private TaskGate gate;

  /** For the engine, which instantiates tasks by class. */
  public EngineTask() {}

  @Override
  public String version() {
    return connector.version();
  }

  @Override
  public void initialize(SourceTaskContext context) {
    super.initialize(context);
    connector.initialize(context);
  }

  @Override
  public void start(Map<String, String> props) {
    gate = TaskGate.named(props.get(TaskGate.REGISTRATION));
    if (gate == null) {
      throw new ConnectException(
          "this connector task runs only in the relay's CDC source, whose session stopped it (gate "
              + props.get(TaskGate.REGISTRATION)
              + ")");
    }
    enter();
    try {
      connector.start(props);
    } finally {
      gate.exit();
    }
  }

  @Override
  public List<SourceRecord> poll() throws InterruptedException {
    enter();
    try {
      return connector.poll();
    } finally {
      gate.exit();
    }
  }

  private void enter() {
    if (!gate.enter(connector)) {
      // Not retriable: the engine ends, as the session that stopped it wants.
      throw new ConnectException("the relay stopped this change stream's engine");
    }
  }

  @Override
  public void commitRecord(SourceRecord record, RecordMetadata metadata)
      throws InterruptedException {
    connector.commitRecord(record, metadata);
  }

  @Override
  public void commit() throws InterruptedException {
    connector.commit();
  }

  /** The engine stops its task only when it ends: the session's gate closes for good. */
  @Override
  public void stop() {
    if (gate != null) {
      gate.close();
    } // else never started: nothing to stop
  }
}
