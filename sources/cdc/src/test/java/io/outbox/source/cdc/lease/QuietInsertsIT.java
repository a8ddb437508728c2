package io.outbox.source.cdc.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxTables;
import io.outbox.source.cdc.CdcFixture;
import io.outbox.testkit.Teardown;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The wake gate the leader session holds ({@link QuietInserts}) is taken once per session, and
 * taken again on the next leader session, whatever became of the old one.
 */
class QuietInsertsIT {

  @RegisterExtension final Teardown teardown = new Teardown();
  private CdcFixture fx;

  @Test
  void aNewLeaderSessionTakesTheGateAgain(TestInfo info) throws Exception {
    fx = teardown.add(new CdcFixture("cdc_" + info.getTestMethod().orElseThrow().getName()));
    QuietInserts gate = new QuietInserts(OutboxTables.of("outbox"), CdcFixture.PIPELINE);
    try (Connection first = fx.db.connect()) {
      gate.take(first);
      assertThat(fx.wakeGateHolder()).isEqualTo(pid(first));
      gate.take(first); // held already: not taken a second time
      try (Statement s = first.createStatement()) {
        s.execute("SELECT pg_advisory_unlock(" + OutboxTables.of("outbox").wakeLockKey() + ", 1)");
      }
      assertThat(fx.wakeGateHolder()).as("one unlock frees it: it was taken once").isZero();
    }
    // The first session ended (however the lease was given up): the next one is new.
    try (Connection second = fx.db.connect()) {
      long pid = pid(second);
      await()
          .alias("the new session holds the gate once the old one's backend is gone")
          .atMost(Duration.ofSeconds(5))
          .until(
              () -> {
                gate.take(second);
                return fx.wakeGateHolder() == pid;
              });
    }
  }

  private static long pid(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
