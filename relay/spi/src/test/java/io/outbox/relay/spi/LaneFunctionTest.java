package io.outbox.relay.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The Java form of the lane function against values PostgreSQL 15 computed on this project's
 * machine ({@code SELECT hashtext(...)}); {@code LaneFunctionIT} (polling source) compares both
 * forms on 4,000 keys against the live server.
 */
class LaneFunctionTest {

  private static int hashtext(String s) {
    return LaneFunction.hashText(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void hashesAsPostgresHashtextDoes() {
    assertThat(hashtext("")).isEqualTo(-1477818771);
    assertThat(hashtext("order\u001forder-1")).isEqualTo(-323665090); // 13 bytes: one block
    assertThat(hashtext("abcdefghijklmnopqrstuvwxyz")).isEqualTo(167831483); // two blocks, 2 left
    assertThat(hashtext("é€😀漢")).isEqualTo(-1068427911); // 12 bytes of UTF-8
  }

  @Test
  void aKeysLaneIsItsHashWithoutTheSignBitModuloTheLanes() {
    assertThat(LaneFunction.lane("order", "order-1", 4)).isEqualTo(2);
    assertThat(new AggregateKey("order", "order-1").lane(4)).isEqualTo(2);
    assertThat(LaneFunction.lane("order", "order-1", 1)).isZero();
    assertThatThrownBy(() -> LaneFunction.lane("order", "order-1", 0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
