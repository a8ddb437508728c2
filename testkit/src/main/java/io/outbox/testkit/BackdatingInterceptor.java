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
 *
 * <p>Configured with {@link #TOPICS_ENDING} (a producer setting), it back-dates every record to a
 * topic whose name ends so, and no other: such a topic refuses records while its {@code
 * message.timestamp.before.max.ms} is below a day, yet still takes transaction markers (stamped
 * with the broker's clock), which a limit of 0 refuses, leaving the transaction open for good.
 */
public final class BackdatingInterceptor implements ProducerInterceptor<Object, Object> {

  public static final int EVERY = 40;

  /**
   * How far a record is back-dated: add it to a back-dated record's timestamp for its send time.
   */
  public static final Duration BY = Duration.ofDays(1);

  /** The producer setting naming the end of the topics whose every record is back-dated. */
  public static final String TOPICS_ENDING = "outbox.test.backdate-topics-ending";

  private static final AtomicLong SENT = new AtomicLong();
  private volatile String topicsEnding;

  @Override
  public ProducerRecord<Object, Object> onSend(ProducerRecord<Object, Object> record) {
    String ending = topicsEnding;
    if (ending != null ? !record.topic().endsWith(ending) : SENT.incrementAndGet() % EVERY != 0) {
      return record;
    }
    return new ProducerRecord<>(
        record.topic(),
        record.partition(),
        System.currentTimeMillis() - BY.toMillis(),
        record.key(),
        record.value(),
        record.headers());
  }

  @Override
  public void onAcknowledgement(RecordMetadata metadata, Exception exception) {}

  @Override
  public void close() {}

  @Override
  public void configure(Map<String, ?> configs) {
    Object ending = configs.get(TOPICS_ENDING);
    topicsEnding = ending == null ? null : ending.toString();
  }
}
