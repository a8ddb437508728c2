package io.outbox.source.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.admin.OutboxStatus.ConnectionOpener;
import io.outbox.testkit.PrivatePgBouncer;
import io.outbox.testkit.PrivatePgBouncer.PoolMode;
import io.outbox.testkit.Services;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The pooling check against Debian's pgbouncer in each pool mode, and without a pooler. */
class SessionPoolingCheckIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static TestDatabase db;

  @BeforeAll
  static void createDatabase() {
    db = TestDatabase.create("pooling_check");
  }

  @AfterAll
  static void dropDatabase() {
    db.close();
  }

  @Test
  void aDirectConnectionPasses() {
    assertThat(SessionPoolingCheck.startUpProblems(db::connect, TIMEOUT, "it")).isEmpty();
  }

  @Test
  void pgBouncerInSessionModePasses() {
    try (PrivatePgBouncer bouncer = PrivatePgBouncer.start(PoolMode.SESSION)) {
      assertThat(SessionPoolingCheck.startUpProblems(through(bouncer), TIMEOUT, "it")).isEmpty();
    }
  }

  @Test
  void pgBouncerInTransactionModeIsRefused() throws SQLException {
    try (PrivatePgBouncer bouncer = PrivatePgBouncer.start(PoolMode.TRANSACTION)) {
      assertThat(SessionPoolingCheck.problem(through(bouncer), TIMEOUT))
          .hasValueSatisfying(
              line -> assertThat(line).contains("two client sessions ran in the same server"));
    }
  }

  @Test
  void pgBouncerInStatementModeIsRefused() throws SQLException {
    try (PrivatePgBouncer bouncer = PrivatePgBouncer.start(PoolMode.STATEMENT)) {
      assertThat(SessionPoolingCheck.problem(through(bouncer), TIMEOUT)).isPresent();
    }
  }

  /**
   * Round robin over several idle server sessions (a pool other clients used): the first client's
   * second statement gets another server process.
   */
  @Test
  void pgBouncerInTransactionModeWithRoundRobinOverIdleSessionsIsRefused() throws SQLException {
    try (PrivatePgBouncer bouncer = PrivatePgBouncer.startRoundRobin(PoolMode.TRANSACTION)) {
      ConnectionOpener open = through(bouncer);
      warm(open, 4);
      assertThat(SessionPoolingCheck.problem(open, TIMEOUT))
          .hasValueSatisfying(
              line -> assertThat(line).contains("one client session ran in server processes"));
    }
  }

  /**
   * Leaves {@code n} idle server sessions in the pool: n clients, each in a transaction at once.
   */
  private static void warm(ConnectionOpener open, int n) throws SQLException {
    List<Connection> clients = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        Connection c = open.open();
        clients.add(c);
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
          st.execute("SELECT 1");
        }
      }
      for (Connection c : clients) {
        c.commit();
      }
    } finally {
      for (Connection c : clients) {
        c.close();
      }
    }
  }

  private static ConnectionOpener through(PrivatePgBouncer bouncer) {
    return () ->
        DriverManager.getConnection(
            bouncer.jdbcUrl(db.name()), Services.pgUser(), Services.pgPassword());
  }
}
