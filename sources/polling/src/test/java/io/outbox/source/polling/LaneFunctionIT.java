package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.spi.AggregateKey;
import io.outbox.relay.spi.LaneFunction;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The lane function's two forms agree (issue #29): the polling source's SQL ({@link
 * LaneFunction#sql}, PostgreSQL's {@code hashtext}) and the Java one the CDC source uses ({@link
 * AggregateKey#lane}), on the same keys, for several lane counts.
 */
class LaneFunctionIT {

  private static final int[] LANE_COUNTS = {2, 3, 4, 7, 8, 16, 64};

  /** Keys of every length up to 60 bytes and beyond, ASCII and not, empty parts included. */
  private static List<String[]> keys() {
    Random random = new Random(29);
    String alphabet = "abcXYZ019-_:/ é€😀漢\u001f";
    List<String[]> keys = new ArrayList<>();
    keys.add(new String[] {"", ""});
    keys.add(new String[] {"order", ""});
    keys.add(new String[] {"", "42"});
    for (int i = 0; i < 3000; i++) {
      keys.add(new String[] {word(random, alphabet, i % 7), word(random, alphabet, i % 61)});
    }
    for (int i = 0; i < 1000; i++) {
      keys.add(new String[] {"order", "order-" + i}); // the shape of real keys
    }
    return keys;
  }

  private static String word(Random random, String alphabet, int length) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < length; i++) {
      sb.appendCodePoint(
          alphabet.codePointAt(
              alphabet.offsetByCodePoints(
                  0, random.nextInt(alphabet.codePointCount(0, alphabet.length())))));
    }
    return sb.toString();
  }

  @Test
  void theSqlAndTheJavaFormGiveEveryKeyTheSameLane() throws Exception {
    List<String[]> keys = keys();
    StringBuilder select = new StringBuilder("SELECT t, i");
    for (int lanes : LANE_COUNTS) {
      select.append(", ").append(LaneFunction.sql("t", "i", lanes));
    }
    select.append(" FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS k(t, i, n) ORDER BY n");
    List<String> mismatches = new ArrayList<>();
    int rows = 0;
    try (TestDatabase db = TestDatabase.create("lane_function");
        Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(select.toString())) {
      ps.setArray(1, c.createArrayOf("text", keys.stream().map(k -> k[0]).toArray()));
      ps.setArray(2, c.createArrayOf("text", keys.stream().map(k -> k[1]).toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          AggregateKey key = new AggregateKey(rs.getString(1), rs.getString(2));
          for (int j = 0; j < LANE_COUNTS.length; j++) {
            int sql = rs.getInt(3 + j);
            int java = key.lane(LANE_COUNTS[j]);
            if (sql != java && mismatches.size() < 20) {
              mismatches.add(
                  key + " with " + LANE_COUNTS[j] + " lanes: SQL " + sql + ", Java " + java);
            }
          }
          rows++;
        }
      }
    }
    assertThat(rows).isEqualTo(keys.size());
    assertThat(mismatches).as("keys whose lanes differ").isEmpty();
  }
}
