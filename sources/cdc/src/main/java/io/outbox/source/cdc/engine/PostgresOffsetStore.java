package io.outbox.source.cdc.engine;

import io.outbox.source.cdc.CdcConnections;
import io.outbox.source.cdc.lease.Fence;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.OffsetBackingStore;
import org.apache.kafka.connect.util.Callback;

/**
 * The engine's offset store: a PostgreSQL table of the relay ({@code <outbox>_relay_offsets}, one
 * row per pipeline and offset key), so the daemon keeps no state on local disk and can move hosts.
 * The engine instantiates it by class name; the source hands it its table and connections through
 * {@link #register}, under a registration id passed in the engine properties (no password ever goes
 * through the engine's configuration for this).
 *
 * <p>The source only ever marks positions whose events all have a final verdict, so whatever this
 * store holds is safe to resume from.
 */
public final class PostgresOffsetStore implements OffsetBackingStore {

  /** The engine property that names the registration. */
  static final String REGISTRATION = "outbox-relay.offsets.registration";

  private static final Map<String, Target> TARGETS = new ConcurrentHashMap<>();

  /**
   * Where one pipeline's offsets live, and the fence every write checks; {@code sockets}, the
   * registration of the engine's {@link EngineSockets} its session opens through ({@code null}:
   * plain sockets), so that an instance that lost the lease closes it with the engine's.
   */
  record Target(
      CdcConnections connections,
      String qualifiedTable,
      String pipeline,
      Fence fence,
      String sockets) {}

  private Target target;
  private Connection connection; // guarded by this

  /** Called by the engine. */
  public PostgresOffsetStore() {}

  /** Makes {@code target} available to the store the engine creates; returns the id to pass. */
  static String register(Target target) {
    String id = UUID.randomUUID().toString();
    TARGETS.put(id, target);
    return id;
  }

  static void unregister(String id) {
    TARGETS.remove(id);
  }

  @Override
  public void configure(WorkerConfig config) {
    String id = config.originalsStrings().get(REGISTRATION);
    target = id == null ? null : TARGETS.get(id);
    if (target == null) {
      throw new ConnectException(
          "the outbox-relay offset store is used only by the relay's CDC source (no registration "
              + id
              + ")");
    }
  }

  @Override
  public void start() {}

  @Override
  public synchronized void stop() {
    close();
  }

  @Override
  public synchronized Future<Map<ByteBuffer, ByteBuffer>> get(Collection<ByteBuffer> keys) {
    try {
      Map<ByteBuffer, ByteBuffer> all = readAll();
      Map<ByteBuffer, ByteBuffer> found = new HashMap<>();
      for (ByteBuffer key : keys) {
        found.put(key, all.get(key));
      }
      return CompletableFuture.completedFuture(found);
    } catch (SQLException e) {
      close();
      return CompletableFuture.failedFuture(failure("reading", e));
    }
  }

  @Override
  public synchronized Future<Void> set(
      Map<ByteBuffer, ByteBuffer> values, Callback<Void> callback) {
    try {
      Connection c = connection();
      c.setAutoCommit(false);
      try {
        target.fence().check(c);
      } catch (SQLException e) {
        c.rollback();
        throw e;
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO "
                  + target.qualifiedTable()
                  + " (pipeline, offset_key, offset_value, updated_at) VALUES (?, ?, ?, now())"
                  + " ON CONFLICT (pipeline, offset_key) DO UPDATE"
                  + " SET offset_value = excluded.offset_value, updated_at = now()")) {
        for (Map.Entry<ByteBuffer, ByteBuffer> e : values.entrySet()) {
          ps.setString(1, target.pipeline());
          ps.setBytes(2, bytes(e.getKey()));
          ps.setBytes(3, e.getValue() == null ? null : bytes(e.getValue()));
          ps.addBatch();
        }
        ps.executeBatch();
      }
      c.commit();
      if (callback != null) {
        callback.onCompletion(null, null);
      }
      return CompletableFuture.completedFuture(null);
    } catch (SQLException e) {
      close();
      ConnectException failure = failure("writing", e);
      if (callback != null) {
        callback.onCompletion(failure, null);
      }
      return CompletableFuture.failedFuture(failure);
    }
  }

  @Override
  public Set<Map<String, Object>> connectorPartitions(String connectorName) {
    return Set.of(); // not used by the PostgreSQL connector
  }

  private Map<ByteBuffer, ByteBuffer> readAll() throws SQLException {
    Map<ByteBuffer, ByteBuffer> all = new HashMap<>();
    Connection c = connection();
    c.setAutoCommit(true);
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT offset_key, offset_value FROM "
                + target.qualifiedTable()
                + " WHERE pipeline = ?")) {
      ps.setString(1, target.pipeline());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          byte[] value = rs.getBytes(2);
          all.put(ByteBuffer.wrap(rs.getBytes(1)), value == null ? null : ByteBuffer.wrap(value));
        }
      }
    }
    return all;
  }

  private Connection connection() throws SQLException {
    if (connection == null || connection.isClosed()) {
      connection = target.connections().dedicatedThrough("offsets", target.sockets());
    }
    return connection;
  }

  private void close() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        // The session is gone either way.
      }
      connection = null;
    }
  }

  private ConnectException failure(String what, SQLException e) {
    return new ConnectException(
        "pipeline "
            + target.pipeline()
            + ": "
            + what
            + " CDC offsets in "
            + target.qualifiedTable()
            + " failed: "
            + e.getMessage(),
        e);
  }

  private static byte[] bytes(ByteBuffer buffer) {
    ByteBuffer copy = buffer.duplicate();
    byte[] b = new byte[copy.remaining()];
    copy.get(b);
    return b;
  }
}
