package io.outbox.testkit;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * A producer interceptor for tests: gives one record in {@link #EVERY} a timestamp a day old, which
 * a topic with a shorter {@code message.timestamp.before.max.ms} refuses (INVALID_TIMESTAMP) while
 * it takes the records around it: a broker refusing one record and not the next. Works for any key
 * and value type (the daemon's producer, a Connect worker's byte arrays).
 */
public final class BackdatingInterceptor implements ProducerInterceptor<Object, Object> {

  public static final int EVERY = 40;
  private static final AtomicLong SENT = new AtomicLong();

  @Override
  public ProducerRecord<Object, Object> onSend(ProducerRecord<Object, Object> record) {
    if (SENT.incrementAndGet() % EVERY != 0) {
      return record;
    }
    return new ProducerRecord<>(
        record.topic(),
        record.partition(),
        System.currentTimeMillis() - Duration.ofDays(1).toMillis(),
        record.key(),
        record.value(),
        record.headers());
  }

  @Override
  public void onAcknowledgement(RecordMetadata metadata, Exception exception) {}

  @Override
  public void close() {}

  @Override
  public void configure(Map<String, ?> configs) {}
}
