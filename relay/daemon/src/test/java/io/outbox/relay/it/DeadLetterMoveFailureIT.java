package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxMessage;
import io.outbox.relay.Relay;
import io.outbox.relay.pipeline.PipelineStats;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.Services;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A dead-letter table that refuses every move (a CHECK constraint of a table made by hand, a move
 * slower than statement-timeout), with Kafka: the published events of the poison's batch are
 * recorded once and never sent again, the poison waits in the outbox as a retry naming the failure,
 * and the metric counts it.
 */
class DeadLetterMoveFailureIT {

  private final RelayFixture fx = new RelayFixture("dl_move_failure");
  private Relay relay;

  @AfterEach
  void tearDown() {
    if (relay != null) {
      relay.close(Duration.ofSeconds(10));
    }
    fx.close();
  }

  @Test
  void aCheckConstraintThatRefusesTheMoveNeverRepublishesTheBatch() throws Exception {
    sql("ALTER TABLE outbox_dead_letter ADD CONSTRAINT no_permanent CHECK (reason <> 'permanent')");

    publishesTheBatchOnceAndKeepsThePoison("", "violates check constraint \"no_permanent\"");
  }

  @Test
  void aMoveSlowerThanStatementTimeoutNeverRepublishesTheBatch() throws Exception {
    sql(
        "CREATE FUNCTION slow_dead_letter() RETURNS trigger LANGUAGE plpgsql AS"
            + " $$ BEGIN PERFORM pg_sleep(5); RETURN NEW; END $$");
    sql(
        "CREATE TRIGGER slow BEFORE INSERT ON outbox_dead_letter"
            + " FOR EACH ROW EXECUTE FUNCTION slow_dead_letter()");

    publishesTheBatchOnceAndKeepsThePoison(
        "source.polling.statement-timeout = 1s", "canceling statement due to statement timeout");
  }

  private void publishesTheBatchOnceAndKeepsThePoison(String extra, String cause) throws Exception {
    // One transaction, one key each: one batch, where the poison is not the last.
    List<OutboxMessage> batch = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      batch.add(RelayFixture.event("k" + i, i));
    }
    batch.add(
        OutboxMessage.builder()
            .aggregate("order", "poison")
            .eventType("Misrouted")
            .destination("not a valid topic!")
            .payload("{}")
            .build());
    for (int i = 4; i <= 6; i++) {
      batch.add(RelayFixture.event("k" + i, i));
    }
    List<UUID> ids = fx.commit(batch);
    UUID poison = ids.get(3);

    relay = fx.start(extra);
    PipelineStats stats = relay.pipelines().get(0).stats();

    await()
        .atMost(Duration.ofSeconds(40))
        .until(() -> stats.deadLetterMoveFailures() == 1 && fx.unpublished() == 1);
    // Long enough for the old behaviour (the batch rolled back, claimed and sent again after the
    // pipeline's error backoff) to show: nothing more is sent.
    await()
        .during(Duration.ofSeconds(5))
        .atMost(Duration.ofSeconds(8))
        .until(() -> stats.attempts() == 7 && stats.deadLetterMoveFailures() == 1);

    List<ConsumerRecord<String, byte[]>> sent =
        KafkaTestSupport.readToEnd(
            Services.kafkaBootstrap(), fx.topic("order"), Duration.ofSeconds(30));
    List<UUID> healthy = new ArrayList<>(ids);
    healthy.remove(poison);
    assertThat(sent)
        .extracting(r -> UUID.fromString(KafkaTestSupport.header(r, "event-id")))
        .containsExactlyInAnyOrderElementsOf(healthy); // each once
    assertThat(stats.published()).isEqualTo(6);
    assertThat(stats.deadLettered()).isZero();
    assertThat(
            fx.count(
                "SELECT count(*) FROM outbox WHERE event_id = '"
                    + poison
                    + "' AND published_at IS NULL AND attempts = 1"
                    + " AND next_attempt_at > now() + interval '30 seconds'"
                    + " AND last_error LIKE 'dead-letter move failed: %"
                    + cause.replace("'", "''")
                    + "%'"))
        .isEqualTo(1);
    assertThat(fx.count("SELECT count(*) FROM outbox_dead_letter")).isZero();
    assertThat(relay.registry().scrape())
        .contains("outbox_relay_dead_letter_move_failures_total{pipeline=\"it\"} 1.0");
  }

  private void sql(String statement) throws SQLException {
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement()) {
      st.execute(statement);
    }
  }
}
