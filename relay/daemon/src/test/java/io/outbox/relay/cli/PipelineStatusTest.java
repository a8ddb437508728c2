package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.admin.OutboxStatus;
import io.outbox.admin.SlotCreationWait;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class PipelineStatusTest {

  @Test
  void agesAreShortAndHuman() {
    assertThat(PipelineStatus.age(Duration.ZERO)).isEqualTo("-");
    assertThat(PipelineStatus.age(Duration.ofMillis(400))).isEqualTo("0s");
    assertThat(PipelineStatus.age(Duration.ofSeconds(59))).isEqualTo("59s");
    assertThat(PipelineStatus.age(Duration.ofSeconds(185))).isEqualTo("3m05s");
    assertThat(PipelineStatus.age(Duration.ofMinutes(127))).isEqualTo("2h07m");
    assertThat(PipelineStatus.age(Duration.ofHours(76))).isEqualTo("3d04h");
  }

  @Test
  void roleNamesTheStandbys() {
    assertThat(status(new OutboxStatus.Instances(true, 1)).roleText()).isEqualTo("active");
    assertThat(status(new OutboxStatus.Instances(true, 3)).roleText())
        .isEqualTo("active (+2 standby)");
    assertThat(status(new OutboxStatus.Instances(false, 2)).roleText()).isEqualTo("standby (2)");
    assertThat(status(new OutboxStatus.Instances(false, 0)).roleText()).isEqualTo("not running");
    assertThat(new OutboxStatus.Instances(false, 0).role()).isEqualTo("not running");
  }

  @Test
  void anActiveInstanceShowsItsEpochAndALeaseThatExpired() {
    OutboxStatus.Lease fresh = new OutboxStatus.Lease(3, "host/42", Duration.ofSeconds(8));
    OutboxStatus.Lease expired = new OutboxStatus.Lease(3, "host/42", Duration.ofSeconds(-4));
    assertThat(status(new OutboxStatus.Instances(true, 2, fresh)).roleText())
        .isEqualTo("active (+1 standby) epoch 3");
    assertThat(status(new OutboxStatus.Instances(true, 2, expired)).roleText())
        .isEqualTo("active (+1 standby) epoch 3, lease expired 4s ago");
    assertThat(PipelineStatus.json(List.of(status(new OutboxStatus.Instances(true, 2, fresh)))))
        .contains("\"epoch\" : 3")
        .contains("\"holder\" : \"host/42\"")
        .contains("\"expires_in_seconds\" : 8.0");
  }

  @Test
  void anUnreadablePipelineShowsItsErrorInTheTableAndTheJson() {
    List<PipelineStatus> all =
        List.of(
            status(new OutboxStatus.Instances(true, 1)),
            PipelineStatus.failed("gone", "public.outbox", "cannot connect: refused"));
    assertThat(PipelineStatus.text(all).lines())
        .containsExactly(
            "PIPELINE  ROLE    PENDING  OLDEST  RETRYING  DEAD LETTERS  LAST ERROR",
            "orders    active  7        3m05s   1         2             boom",
            "gone      ?       ?        ?       ?         ?             cannot connect: refused");
    assertThat(PipelineStatus.json(all))
        .contains("\"error\" : \"cannot connect: refused\"")
        .contains("\"oldest_pending_age_seconds\" : 185.0");
  }

  @Test
  void deadLettersTheTableRefusedAreCountedBesideTheRetries() {
    PipelineStatus s =
        PipelineStatus.read(
            "orders",
            "public.outbox",
            new OutboxStatus.Instances(true, 1),
            new OutboxStatus.Backlog(
                7, Duration.ofSeconds(185), 3, 2, "dead-letter move failed", 1));
    assertThat(PipelineStatus.text(List.of(s)).lines())
        .element(1)
        .asString()
        .contains("3 (1 dead-letter move failed)");
    assertThat(PipelineStatus.json(List.of(s))).contains("\"dead_letter_move_failed\" : 1");
  }

  @Test
  void aSlotCreationThatWaitsNamesTheTransactionsItWaitsFor() {
    SlotCreationWait wait =
        new SlotCreationWait(
            4711,
            Duration.ofSeconds(42),
            List.of(
                new SlotCreationWait.Blocker(4242, "app/psql", Duration.ofSeconds(125)),
                new SlotCreationWait.Blocker(null, "tx-1", Duration.ofSeconds(9))));
    PipelineStatus s =
        PipelineStatus.read(
            "orders",
            "public.outbox",
            new OutboxStatus.Instances(true, 1),
            new OutboxStatus.Backlog(7, Duration.ofSeconds(185), 1, 2, "boom"),
            wait);
    assertThat(PipelineStatus.text(List.of(s)).lines())
        .last()
        .isEqualTo(
            "orders: creating the replication slot for 42s, waiting for 2 transaction(s) open"
                + " since before: pid 4242 (app/psql, open 125s), prepared transaction 'tx-1'"
                + " (open 9s)");
    assertThat(PipelineStatus.json(List.of(s)))
        .contains("\"waiting_seconds\" : 42.0")
        .contains("\"pid\" : 4242")
        .contains("\"pid\" : null")
        .contains("\"open_seconds\" : 125.0");
  }

  private static PipelineStatus status(OutboxStatus.Instances instances) {
    return PipelineStatus.read(
        "orders",
        "public.outbox",
        instances,
        new OutboxStatus.Backlog(7, Duration.ofSeconds(185), 1, 2, "boom"));
  }
}
