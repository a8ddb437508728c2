package io.outbox.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.testkit.FakeTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.ScriptedProducersAdmin;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The commit check's deadline ({@link HangingTransactions#markersWritten}) on a driven clock: it
 * asks the partitions again until the commit markers are written or its timeout passed on the
 * relay's ticker, whatever the wall clock did meanwhile.
 */
class HangingTransactionsTest {

  private static final TopicPartition WRITTEN = new TopicPartition("orders", 0);
  private static final long PRODUCER = 7;

  private final FakeTime time = new FakeTime();
  private final AtomicInteger asked = new AtomicInteger();
  private volatile int openFor = Integer.MAX_VALUE; // questions answered "still open"
  private final KafkaClients clients =
      new KafkaClients("p", Map.of(), adminConfig(), new AnsweringAdmin(), time);
  private final HangingTransactions hanging = new HangingTransactions("p", clients, "ledger", time);

  @AfterEach
  void close() {
    clients.close(Duration.ofSeconds(1));
  }

  private static Map<String, Object> adminConfig() {
    // The real client underneath is never asked: nothing listens on port 1.
    return Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1");
  }

  /**
   * Each question takes a second of the relay's time; the transaction stays open {@code openFor}.
   */
  private final class AnsweringAdmin implements KafkaClients.Factory {
    @Override
    public Producer<String, byte[]> producer(Map<String, Object> config) {
      throw new UnsupportedOperationException("no producer in this test");
    }

    @Override
    public Admin admin(Map<String, Object> config) {
      return new ScriptedProducersAdmin(
          config,
          tp -> {
            time.advance(Duration.ofSeconds(1));
            return asked.incrementAndGet() <= openFor
                ? List.of(
                    new ProducerState(PRODUCER, 0, 0, 0, OptionalInt.empty(), OptionalLong.of(3)))
                : List.of();
          });
    }
  }

  @Test
  void theCheckGivesUpOnceItsTimeoutPassedOnTheTicker() throws Exception {
    boolean written =
        hanging.markersWritten(PRODUCER, Map.of(WRITTEN, 5L), Duration.ofMillis(2_500));

    assertThat(written).isFalse();
    // Asked at 1 s and 2 s (still open, time left), and at 3 s (still open, the timeout passed).
    assertThat(asked).hasValue(3);
  }

  @Test
  void theCheckEndsAsSoonAsTheMarkersAreWritten() throws Exception {
    openFor = 1;

    assertThat(hanging.markersWritten(PRODUCER, Map.of(WRITTEN, 5L), Duration.ofSeconds(10)))
        .isTrue();
    assertThat(asked).hasValue(2);
  }
}
