package io.outbox.connect;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;
import org.apache.kafka.connect.storage.MemoryOffsetBackingStore;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.apache.kafka.connect.storage.OffsetStorageReaderImpl;
import org.apache.kafka.connect.storage.OffsetStorageWriter;

/**
 * A worker's source offsets for tests: Connect's own offset writer and reader with the worker's
 * internal JSON converter, over a store keyed by the serialized partition like the offsets topic.
 */
final class WorkerOffsets implements AutoCloseable {

  private final MemoryOffsetBackingStore store =
      new MemoryOffsetBackingStore() {
        @Override
        public Set<Map<String, Object>> connectorPartitions(String connectorName) {
          return Set.of();
        }
      };

  WorkerOffsets() {
    store.start();
  }

  /** What the worker gives the connector's tasks: offsets read under the connector's name. */
  OffsetStorageReader reader(String connector) {
    return new OffsetStorageReaderImpl(store, connector, converter(), converter());
  }

  /** What the worker does at a transaction's commit: each offset stored under its partition. */
  void commit(String connector, Map<Map<String, Object>, Map<String, Object>> offsets)
      throws Exception {
    OffsetStorageWriter writer =
        new OffsetStorageWriter(store, connector, converter(), converter());
    offsets.forEach(writer::offset);
    if (!writer.beginFlush()) {
      throw new IllegalStateException("nothing to commit");
    }
    writer.doFlush((error, result) -> {}).get(10, TimeUnit.SECONDS);
  }

  /** The worker's internal converter for offsets' keys and values. */
  static JsonConverter converter() {
    JsonConverter c = new JsonConverter();
    c.configure(Map.of(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "false"), true);
    return c;
  }

  @Override
  public void close() {
    store.stop();
  }
}
