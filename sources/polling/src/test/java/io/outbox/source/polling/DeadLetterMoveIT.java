package io.outbox.source.polling;

import static io.outbox.source.polling.PollingFixture.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.admin.OutboxStatus;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.DatabaseSettings.OnPublish;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settled;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Settlement.DeadLetterReason;
import io.outbox.relay.spi.SourceException;
import io.outbox.source.postgres.OutboxVerdicts;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A dead-letter table that refuses the move, every time: only the move is undone, the refused dead
 * letter stays in the outbox as a retry naming the failure, and the rest of its batch is recorded,
 * so the batch is never claimed (and published) again.
 */
class DeadLetterMoveIT {

  private PollingFixture fx;

  @BeforeEach
  void setUp() throws Exception {
    fx = PollingFixture.create("dl_move");
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void aDeadLetterTheTableRejectsStaysAsARetryAndTheRestOfTheBatchIsRecorded() throws Exception {
    fx.execute(
        "ALTER TABLE outbox_dead_letter ADD CONSTRAINT no_permanent CHECK (reason <> 'permanent')");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);

    long poison = settleBatchWithOnePoison(source);

    String error = (String) fx.value("SELECT last_error FROM outbox WHERE id = ?", poison);
    assertThat(error)
        .startsWith(
            "dead-letter move failed: ERROR: new row for relation \"outbox_dead_letter\""
                + " violates check constraint \"no_permanent\"")
        .endsWith("(was to be dead-lettered as permanent: record too large)")
        .doesNotContain("Failing row"); // the driver's detail would show the payload
  }

  @Test
  void aMoveThatExceedsStatementTimeoutIsUndoneAlone() throws Exception {
    fx.execute(
        "CREATE FUNCTION slow_dead_letter() RETURNS trigger LANGUAGE plpgsql AS"
            + " $$ BEGIN PERFORM pg_sleep(5); RETURN NEW; END $$");
    fx.execute(
        "CREATE TRIGGER slow BEFORE INSERT ON outbox_dead_letter"
            + " FOR EACH ROW EXECUTE FUNCTION slow_dead_letter()");
    PollingSource source =
        fx.source(
            1, OnPublish.MARK, Map.of("statement-timeout", "1s"), new CopyOnWriteArrayList<>());
    source.activate();

    long poison = settleBatchWithOnePoison(source);

    assertThat((String) fx.value("SELECT last_error FROM outbox WHERE id = ?", poison))
        .startsWith("dead-letter move failed: ERROR: canceling statement due to statement timeout");
  }

  @Test
  void theKeptDeadLetterIsMovedOnceTheTableTakesIt() throws Exception {
    fx.execute(
        "ALTER TABLE outbox_dead_letter ADD CONSTRAINT no_permanent CHECK (reason <> 'permanent')");
    PollingSource source = fx.activeSource(1, OnPublish.MARK);
    long poison = settleBatchWithOnePoison(source);

    fx.execute("ALTER TABLE outbox_dead_letter DROP CONSTRAINT no_permanent");
    fx.execute("UPDATE outbox SET next_attempt_at = now() WHERE id = " + poison);
    Claim again = source.claim(0, 10, Duration.ofSeconds(2)); // past the poll interval
    assertThat(ids(again)).containsExactly(poison);
    OutboxEvent event = again.events().get(0);
    assertThat(event.attempts()).isEqualTo(1);
    Settled settled =
        again.settle(
            List.of(
                new Settlement.DeadLetter(
                    event, DeadLetterReason.PERMANENT, 2, "record too large")));

    assertThat(settled).isEqualTo(Settled.AS_GIVEN);
    assertThat(fx.value("SELECT count(*) FROM outbox WHERE id = ?", poison)).isEqualTo(0L);
    assertThat(fx.value("SELECT attempts FROM outbox_dead_letter WHERE id = ?", poison))
        .isEqualTo(2);
  }

  @Test
  void activationRefusesADeadLetterTableTheMoveCannotWrite() throws Exception {
    fx.execute("ALTER TABLE outbox_dead_letter ADD COLUMN tenant text NOT NULL");
    PollingSource source = fx.source(1);

    assertThatThrownBy(source::activate)
        .isInstanceOf(SourceException.class)
        .hasMessage(
            "column public.outbox_dead_letter.tenant is NOT NULL without a default, and the"
                + " dead-letter move does not write it; give it a default or drop NOT NULL");
  }

  /**
   * Claims {@code A, poison, B}, settles A and B published and the poison dead-lettered, and checks
   * what every source must then hold.
   *
   * @return the poison's id
   */
  private long settleBatchWithOnePoison(PollingSource source) throws Exception {
    long a = fx.insert("order", "A");
    long poison = fx.insert("order", "P");
    long b = fx.insert("order", "B");
    Claim claim = source.claim(0, 10, Duration.ZERO);
    assertThat(ids(claim)).containsExactly(a, poison, b);

    Settled settled =
        claim.settle(
            List.of(
                new Settlement.Published(claim.events().get(0)),
                new Settlement.DeadLetter(
                    claim.events().get(1), DeadLetterReason.PERMANENT, 1, "record too large"),
                new Settlement.Published(claim.events().get(2))));

    assertThat(settled.deadLettersKept())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.event().id()).isEqualTo(poison);
              assertThat(r.attempts()).isEqualTo(1);
              assertThat(r.delay()).isEqualTo(OutboxVerdicts.KEPT_RETRY_DELAY);
              assertThat(r.error()).startsWith(OutboxStatus.MOVE_FAILED);
            });
    // The published rows are marked: the batch is not claimed, nor published, again.
    assertThat(fx.column("SELECT id FROM outbox WHERE published_at IS NOT NULL ORDER BY id"))
        .containsExactly(a, b);
    assertThat(source.claim(0, 10, Duration.ZERO).events()).isEmpty();
    // The poison waits in the outbox, with its attempts and the move's failure.
    Map<String, Object> row =
        fx.rows(
                "SELECT attempts, last_error, published_at,"
                    + " extract(epoch FROM next_attempt_at - clock_timestamp()) AS due_in"
                    + " FROM outbox WHERE id = ?",
                poison)
            .get(0);
    assertThat(row.get("attempts")).isEqualTo(1);
    assertThat(row.get("published_at")).isNull();
    assertThat(((Number) row.get("due_in")).doubleValue()).isBetween(30.0, 60.0);
    assertThat(row.get("last_error")).isEqualTo(settled.deadLettersKept().get(0).error());
    assertThat(fx.value("SELECT count(*) FROM outbox_dead_letter")).isEqualTo(0L);
    // `status` and the backlog figures show it.
    OutboxStatus.Backlog backlog =
        new OutboxStatus(OutboxTables.of("outbox", "outbox_dead_letter"))
            .backlog(fx.sql(), PollingFixture.PIPELINE);
    assertThat(backlog.deadLetterMoveFailed()).isEqualTo(1);
    assertThat(backlog.retrying()).isEqualTo(1);
    assertThat(backlog.lastError()).startsWith(OutboxStatus.MOVE_FAILED);
    return poison;
  }
}
