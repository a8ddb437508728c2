package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TableNamesTest {

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
