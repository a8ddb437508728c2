package io.outbox.source.cdc.stream;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CaughtUpIdsTest {

  @Test
  void keepsRunsOfConsecutiveIds() {
    CaughtUpIds ids = new CaughtUpIds();
    for (long id = 10; id <= 20_000; id++) {
      ids.add(id);
    }
    ids.add(20_005);
    ids.add(20_007);
    ids.add(20_008);
    ids.add(20_006); // out of order: ignored
    assertThat(ids.runs()).isEqualTo(3);
    assertThat(ids.contains(9)).isFalse();
    assertThat(ids.contains(10)).isTrue();
    assertThat(ids.contains(15_000)).isTrue();
    assertThat(ids.contains(20_000)).isTrue();
    assertThat(ids.contains(20_001)).isFalse();
    assertThat(ids.contains(20_005)).isTrue();
    assertThat(ids.contains(20_006)).isFalse();
    assertThat(ids.contains(20_008)).isTrue();
    assertThat(ids.contains(20_009)).isFalse();
    ids.clear();
    assertThat(ids.isEmpty()).isTrue();
    assertThat(ids.contains(10)).isFalse();
  }

  @Test
  void stopsKeepingAtItsBound() {
    CaughtUpIds ids = new CaughtUpIds();
    for (long i = 0; i < CaughtUpIds.MAX_RUNS + 10; i++) {
      ids.add(i * 2);
    }
    assertThat(ids.runs()).isEqualTo(CaughtUpIds.MAX_RUNS);
    assertThat(ids.contains(2L * (CaughtUpIds.MAX_RUNS - 1))).isTrue();
    assertThat(ids.contains(2L * CaughtUpIds.MAX_RUNS)).isFalse();
    assertThat(ids.contains(1)).isFalse();
  }
}
