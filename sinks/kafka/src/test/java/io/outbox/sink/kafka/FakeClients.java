package io.outbox.sink.kafka;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Hands out {@link ScriptedProducer}s and remembers them; no admin client. */
final class FakeClients implements KafkaClients.Factory {

  final List<ScriptedProducer> producers = new CopyOnWriteArrayList<>();
  final boolean autoComplete;
  volatile RuntimeException failCreate;

  /** Runs as each record is handed to a producer: a test advances its time there. */
  volatile Runnable onSend = () -> {};

  FakeClients(boolean autoComplete) {
    this.autoComplete = autoComplete;
  }

  @Override
  public Producer<String, byte[]> producer(Map<String, Object> config) {
    if (failCreate != null) {
      throw failCreate;
    }
    ScriptedProducer p = new ScriptedProducer(autoComplete, () -> onSend.run());
    producers.add(p);
    return p;
  }

  @Override
  public Admin admin(Map<String, Object> config) {
    throw new KafkaException("no admin client in unit tests");
  }

  ScriptedProducer last() {
    return producers.get(producers.size() - 1);
  }

  /**
   * A mock producer that can fail a topic's records inside {@code send}, the way KafkaProducer
   * reports metadata timeouts and size errors: callback first, then a failed future.
   */
  static final class ScriptedProducer extends MockProducer<String, byte[]> {
    final Map<String, RuntimeException> failInSend = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    volatile java.time.Duration closeTimeout; // what close was given, null before
    private final Runnable onSend;

    ScriptedProducer(boolean autoComplete, Runnable onSend) {
      super(autoComplete, null, new StringSerializer(), new ByteArraySerializer());
      this.onSend = onSend;
    }

    @Override
    public synchronized Future<RecordMetadata> send(
        ProducerRecord<String, byte[]> record, Callback callback) {
      attempts.computeIfAbsent(record.topic(), t -> new AtomicInteger()).incrementAndGet();
      onSend.run();
      RuntimeException e = failInSend.get(record.topic());
      if (e == null) {
        return super.send(record, callback);
      }
      callback.onCompletion(null, e);
      CompletableFuture<RecordMetadata> failed = new CompletableFuture<>();
      failed.completeExceptionally(e);
      return failed;
    }

    @Override
    public void close(java.time.Duration timeout) {
      closeTimeout = timeout;
      super.close(timeout);
    }

    int attempts(String topic) {
      AtomicInteger n = attempts.get(topic);
      return n == null ? 0 : n.get();
    }
  }
}
