package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxMessage;
import io.outbox.relay.Relay;
import io.outbox.relay.cli.Main;
import io.outbox.testkit.KafkaTestSupport;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real dead letter, replayed with {@code outbox-relay dead-letters replay}, reaches Kafka with
 * its original event id: a relay whose producer refuses records over 1 KiB dead-letters a 3 KiB
 * event (permanent), a relay without that limit publishes it after the replay.
 */
class DeadLetterReplayIT {

  @TempDir Path dir;

  private RelayFixture fx;
  private Relay relay;

  @AfterEach
  void tearDown() {
    if (relay != null) {
      relay.close(Duration.ofSeconds(10));
    }
    if (fx != null) {
      fx.close();
    }
  }

  @Test
  void aReplayedDeadLetterIsPublishedWithItsOriginalEventId() throws Exception {
    fx = new RelayFixture("dead_letter_replay");
    String topic = fx.topic("order");
    KafkaTestSupport.createTopic(topic, 1);
    String big = "{\"pad\":\"" + "x".repeat(3000) + "\"}";
    relay = fx.start("sink.kafka.producer { \"max.request.size\" = 1024 }");
    UUID tooBig =
        fx.commit(
                List.of(
                    OutboxMessage.builder()
                        .aggregate("order", "k1")
                        .eventType("OrderCreated")
                        .payload(big)
                        .header("trace", "t1")
                        .build()))
            .get(0);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> fx.count("SELECT count(*) FROM outbox_dead_letter") == 1);
    relay.close(Duration.ofSeconds(10));
    relay = null;

    Path config = dir.resolve("relay.conf");
    Files.writeString(config, fx.config(""));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        Main.execute(
            new PrintWriter(out),
            new PrintWriter(err),
            "dead-letters",
            "replay",
            "--config",
            config.toString(),
            "--pipeline",
            "it",
            "--id",
            tooBig.toString());

    assertThat(err.toString()).isEmpty();
    assertThat(exit).isZero();
    assertThat(out.toString()).isEqualTo("it: replayed 1 dead letter into public.outbox\n");
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(fx.count("SELECT attempts FROM outbox WHERE published_at IS NULL")).isZero();

    relay = fx.start("");
    List<ConsumerRecord<String, byte[]>> records = fx.read(topic, 1, Duration.ofSeconds(30));
    assertThat(records).hasSize(1);
    ConsumerRecord<String, byte[]> record = records.get(0);
    assertThat(KafkaTestSupport.header(record, "event-id")).isEqualTo(tooBig.toString());
    assertThat(KafkaTestSupport.header(record, "trace")).isEqualTo("t1");
    assertThat(record.key()).isEqualTo("k1");
    assertThat(KafkaTestSupport.valueAsString(record).replace(" ", ""))
        .as("the payload, as jsonb renders it")
        .isEqualTo(big);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> fx.count("SELECT count(*) FROM outbox WHERE published_at IS NOT NULL") == 1);
  }
}
