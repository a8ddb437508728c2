package io.outbox.source.cdc.engine;

import io.outbox.client.OutboxTables;
import io.outbox.source.cdc.CdcConnections;
import io.outbox.source.cdc.CdcSettings;
import java.util.Properties;

/**
 * The Debezium engine and PostgreSQL connector properties of one pipeline: the user's raw {@code
 * source.cdc.debezium} properties, then the ones the relay owns (connection, slot, publication,
 * table filter, no snapshot, INSERTs only, heartbeats, the relay's own offset store, the connector
 * wrapped so that the session owns every call into its task).
 */
final class EngineProperties {

  private EngineProperties() {}

  /** The prefix of the pipeline's heartbeat messages (logical decoding messages). */
  static String heartbeatPrefix(String slot) {
    return "outbox-relay-heartbeat:" + slot;
  }

  static Properties of(
      CdcSettings settings,
      CdcConnections connections,
      OutboxTables tables,
      String pipeline,
      String offsetRegistration,
      String taskGate,
      String sockets) {
    Properties p = new Properties();
    p.putAll(settings.debezium());
    String name = "outbox-relay-" + settings.slotName();
    p.setProperty("name", name);
    // Debezium's PostgreSQL connector, each call into its task passing the session's gate.
    p.setProperty("connector.class", EngineConnector.class.getName());
    p.setProperty(TaskGate.REGISTRATION, taskGate);
    p.setProperty("topic.prefix", name);
    // Offsets: the relay's table; flushed whenever the source commits (it decides the cadence).
    p.setProperty("offset.storage", PostgresOffsetStore.class.getName());
    p.setProperty(PostgresOffsetStore.REGISTRATION, offsetRegistration);
    p.setProperty("offset.flush.interval.ms", "0");
    p.putIfAbsent("offset.flush.timeout.ms", "10000");
    // Where.
    p.setProperty("database.hostname", connections.host());
    p.setProperty("database.port", Integer.toString(connections.port()));
    p.setProperty("database.dbname", connections.databaseName());
    if (connections.user() != null) {
      p.setProperty("database.user", connections.user());
    }
    if (connections.password() != null) {
      p.setProperty("database.password", connections.password());
    }
    p.putIfAbsent("database.applicationName", "outbox-relay " + pipeline + " cdc stream");
    // Passed to the driver of the engine's sessions (Debezium hands database.* on to it): its
    // heartbeat query, run by the streaming loop, then fails on a silent connection instead of
    // blocking the stream; the replication stream itself is read without blocking.
    p.putIfAbsent("database.socketTimeout", connections.socketTimeoutSeconds());
    // Every socket of the engine's sessions, the replication connection's too, through the
    // session's factory: an instance that lost the lease closes them at once (EngineSockets). A
    // user's own socket factory is kept, without that.
    EngineSockets.use(p, "database.", sockets);
    // What: the outbox table's INSERTs through pgoutput, from where the slot is; no snapshot
    // (rows committed before the slot existed are the reconcile sweep's).
    p.setProperty("plugin.name", "pgoutput");
    p.setProperty("slot.name", settings.slotName());
    p.setProperty("publication.name", settings.publicationName());
    p.setProperty("publication.autocreate.mode", "disabled"); // SlotGuard creates it, inserts only
    // Names are letters, digits and _ (OutboxTables): only the dot needs escaping in the regex.
    p.setProperty("table.include.list", tables.schema() + "\\." + tables.table());
    // The columns the stream carries (ChangeEvents.columns; a claim reads the rest of the row):
    // the relay's, whatever the user set. A publication without a column list still sends every
    // column; Debezium then drops the others from its records.
    p.remove("column.exclude.list");
    p.setProperty(
        "column.include.list",
        tables.schema()
            + "\\."
            + tables.table()
            + "\\.("
            + String.join("|", ChangeEvents.columns(tables.columns()))
            + ")");
    // Timestamps as epoch microseconds, not ISO text parsed back (EpochMicrosConverter); a user's
    // own converters replace it, and ChangeEvents reads the text then.
    if (!p.containsKey("converters")) {
      p.setProperty("converters", EpochMicrosConverter.NAME);
      p.setProperty(EpochMicrosConverter.NAME + ".type", EpochMicrosConverter.class.getName());
    }
    p.setProperty("snapshot.mode", "no_data");
    p.setProperty("skipped.operations", "u,d,t");
    p.setProperty("tombstones.on.delete", "false");
    p.setProperty("binary.handling.mode", "bytes");
    p.setProperty("slot.drop.on.stop", "false");
    // A stored offset behind the slot is resumed by moving the slot; a slot ahead of it is an
    // error (SlotGuard says so first, with the way out).
    p.setProperty("offset.mismatch.strategy", "trust_offset");
    p.setProperty("lsn.flush.mode", "connector");
    p.putIfAbsent("slot.max.retries", "30");
    p.putIfAbsent("slot.retry.delay.ms", "1000");
    // Heartbeats through the slot: the slot advances while the outbox is idle, and the sweep
    // learns how far the stream has come.
    p.setProperty("heartbeat.interval.ms", Long.toString(settings.heartbeatInterval().toMillis()));
    p.setProperty(
        "heartbeat.action.query",
        ChangeEvents.heartbeatQuery(heartbeatPrefix(settings.slotName())));
    p.setProperty("poll.interval.ms", Long.toString(settings.pollInterval().toMillis()));
    p.setProperty("max.batch.size", Integer.toString(settings.maxBatchSize()));
    p.setProperty(
        "max.queue.size",
        Integer.toString(Math.max(settings.maxQueueSize(), settings.maxBatchSize() + 1)));
    p.putIfAbsent("task.management.timeout.ms", "15000");
    // A lost replication connection (walsender ended, PostgreSQL restarted) is a retriable error:
    // the engine restarts the connector after this wait (Debezium's default is 10 s).
    p.putIfAbsent("retriable.restart.connector.wait.ms", "2000");
    // Per-event cost the relay does not need: the lag percentiles of Debezium's streaming metrics
    // (a DDSketch per event) and the __debezium.context.* headers of every record.
    p.putIfAbsent("statistics.metrics.enabled", "false");
    p.putIfAbsent("extended.headers.enabled", "false");
    return p;
  }
}
