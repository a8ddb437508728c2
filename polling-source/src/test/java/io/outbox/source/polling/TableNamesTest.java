package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.schema.OutboxTables;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TableNamesTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "outbox",
        "app.outbox",
        "Billing.OrderEvents",
        "a_very_long_schema_name_that_goes_on_and_on.and_an_even_longer_table_name_too"
      })
  void agreesWithTheMigrationOnNamesAndChannel(String table) {
    TableNames ours = TableNames.of(table, "dead");
    OutboxTables theirs = OutboxTables.of(table, "dead");

    assertThat(ours.qualifiedTable()).isEqualTo(theirs.qualifiedTable());
    assertThat(ours.qualifiedDeadLetterTable()).isEqualTo(theirs.qualifiedDeadLetterTable());
    assertThat(ours.displayTable()).isEqualTo(theirs.displayTable());
    assertThat(ours.notifyChannel()).isEqualTo(theirs.notifyChannel());
  }

  @Test
  void lockKeysNeverChangeBetweenReleases() {
    // Instances of different versions must agree during a rolling upgrade: these values are fixed
    // (SHA-256 prefixes of "outbox-relay:leader:<pipeline>:<schema.table>" and
    // "outbox-relay:lane:<schema.table>").
    TableNames outbox = TableNames.of("outbox", "outbox_dead_letter");
    assertThat(outbox.leaderLockKey("orders")).isEqualTo(1901057175795243700L);
    assertThat(outbox.laneLockKey()).isEqualTo(1802062690);
  }

  @Test
  void lockKeysAreStableAndDistinguishPipelinesAndTables() {
    TableNames outbox = TableNames.of("outbox", "outbox_dead_letter");
    TableNames qualified = TableNames.of("public.outbox", "outbox_dead_letter");
    TableNames other = TableNames.of("app.outbox", "outbox_dead_letter");

    assertThat(outbox.leaderLockKey("orders")).isEqualTo(qualified.leaderLockKey("orders"));
    assertThat(outbox.leaderLockKey("orders")).isNotEqualTo(outbox.leaderLockKey("payments"));
    assertThat(outbox.leaderLockKey("orders")).isNotEqualTo(other.leaderLockKey("orders"));
    assertThat(outbox.laneLockKey()).isEqualTo(qualified.laneLockKey());
    assertThat(outbox.laneLockKey()).isNotEqualTo(other.laneLockKey());
  }

  @Test
  void refusesNamesThatAreNotPlainIdentifiers() {
    assertThatThrownBy(() -> TableNames.of("a.b.c", "dead"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'a.b.c'")
        .hasMessageContaining("table");
    assertThatThrownBy(() -> TableNames.of("outbox", "x\"; drop table y"))
        .hasMessageContaining("dead-letter-table");
    assertThatThrownBy(() -> TableNames.of("outbox", "public.outbox"))
        .hasMessageContaining("must differ");
  }
}
