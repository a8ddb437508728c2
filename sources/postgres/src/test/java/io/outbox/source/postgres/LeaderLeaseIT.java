package io.outbox.source.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Ticker;
import io.outbox.schema.Migrator;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The leader lease against the real PostgreSQL: a frozen holder (its session open, its lease not
 * renewed) is ended by a standby, every take-over raises the epoch, the epoch predicate fences the
 * old epoch, and a take-over waits for the old epoch's claims (the fence lock) before it starts.
 */
class LeaderLeaseIT {

  private static final OutboxTables TABLES = OutboxTables.of("outbox");
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final Duration FENCE_WAIT = Duration.ofMillis(500);
  private static TestDatabase db;
  private final List<Connection> sessions = new ArrayList<>();
  private final AtomicLong clock = new AtomicLong(System.nanoTime());

  @BeforeAll
  static void migrate() {
    db = TestDatabase.create("schema_lease");
    new Migrator(TABLES).migrate(db.url(), db.user(), db.password());
  }

  @AfterAll
  static void dropDatabase() {
    db.close();
  }

  @AfterEach
  void closeSessions() throws SQLException {
    for (Connection c : sessions) {
      c.close();
    }
    try (Connection c = db.connect()) {
      c.createStatement().execute("DELETE FROM outbox_relay_leader");
    }
  }

  private Connection session() throws SQLException {
    Connection c = db.connect();
    c.setAutoCommit(true);
    sessions.add(c);
    return c;
  }

  private LeaderLease lease(String holder) {
    return new LeaderLease(TABLES, "orders", holder, LEASE, FENCE_WAIT, Ticker.SYSTEM);
  }

  @Test
  void oneHolderAtATimeAndEveryTakeOverRaisesTheEpoch() throws SQLException {
    LeaderLease a = lease("a");
    LeaderLease b = lease("b");
    Connection sa = session();
    Connection sb = session();

    assertThat(a.tryAcquire(sa)).isTrue();
    assertThat(b.tryAcquire(sb)).isFalse();
    assertThat(a.held()).isTrue();
    assertThat(b.held()).isFalse();
    long first = a.epoch();

    sa.close(); // the holder dies: its lock goes with its session (the server ends it shortly)
    await().atMost(Duration.ofSeconds(5)).until(() -> b.tryAcquire(sb));
    assertThat(b.epoch()).isEqualTo(first + 1);
    assertThat(b.renew(sb)).isTrue();
  }

  @Test
  void aHolderThatStopsRenewingIsEndedByAStandbyWhichThenTakesOver() throws SQLException {
    LeaderLease frozen = lease("frozen");
    LeaderLease standby = lease("standby");
    Connection frozenSession = session();
    Connection standbySession = session();
    assertThat(frozen.tryAcquire(frozenSession)).isTrue();

    // Renewed in time: the standby leaves it alone.
    assertThat(standby.tryAcquire(standbySession)).isFalse();
    assertThat(frozenSession.isValid(2)).isTrue();

    // The holder is frozen: its session stays open, the lease runs out on the database clock.
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> standby.tryAcquire(standbySession));

    assertThat(frozenSession.isValid(2)).isFalse();
    assertThat(standby.epoch()).isEqualTo(frozen.epoch() + 1);
    // The frozen holder wakes up: its renewal finds its session gone.
    assertThatThrownBy(() -> frozen.renew(frozenSession)).isInstanceOf(SQLException.class);
    assertThat(frozen.held()).isFalse();
  }

  @Test
  void anExpiredLeaseIsNotRenewedEvenByItsHolder() throws Exception {
    LeaderLease a = lease("a");
    Connection sa = session();
    assertThat(a.tryAcquire(sa)).isTrue();
    // Paused past its lease: a standby may be ending this session right now.
    Thread.sleep(LEASE.toMillis() + 300);
    assertThat(a.renew(sa)).isFalse();
    assertThat(a.held()).isFalse();
  }

  @Test
  void theEpochOnlyGrowsEvenWhenTheLeaseRowIsDeleted() throws SQLException {
    LeaderLease a = lease("a");
    Connection sa = session();
    assertThat(a.tryAcquire(sa)).isTrue();
    long old = a.epoch();
    sa.close();
    try (Connection c = db.connect()) {
      c.createStatement().execute("DELETE FROM outbox_relay_leader");
    }

    LeaderLease b = lease("b");
    Connection sb = session();
    await().atMost(Duration.ofSeconds(5)).until(() -> b.tryAcquire(sb));
    // An instance of the old epoch, frozen meanwhile, stays fenced.
    assertThat(b.epoch()).isGreaterThan(old);
  }

  @Test
  void aStandbyThatMayNotEndTheFrozenHolderStaysConnectedAndTriesAgain() throws Exception {
    String role = "lease_other_" + db.name().substring(db.name().lastIndexOf('_') + 1);
    try (Connection c = db.connect();
        java.sql.Statement st = c.createStatement()) {
      st.execute("CREATE ROLE " + role + " LOGIN NOSUPERUSER PASSWORD 'x'");
      st.execute("GRANT SELECT, INSERT, UPDATE ON outbox_relay_leader TO " + role);
    }
    try {
      LeaderLease frozen = lease("frozen");
      Connection frozenSession = session(); // the owner's role, a superuser
      assertThat(frozen.tryAcquire(frozenSession)).isTrue();
      LeaderLease standby = lease("standby");
      Connection standbySession = java.sql.DriverManager.getConnection(db.url(), role, "x");
      sessions.add(standbySession);

      Thread.sleep(LEASE.toMillis() + 300); // the holder's lease ran out
      // The standby cannot end a superuser's session: it says so (a log line), but it is no
      // database outage, so the attempt returns rather than throws, and it tries again later.
      assertThat(standby.tryAcquire(standbySession)).isFalse();
      assertThat(standby.tryAcquire(standbySession)).isFalse();
      assertThat(frozenSession.isValid(2)).isTrue();
    } finally {
      for (Connection c : sessions) {
        c.close();
      }
      sessions.clear();
      try (Connection c = db.connect();
          java.sql.Statement st = c.createStatement()) {
        st.execute("DROP OWNED BY " + role);
        st.execute("DROP ROLE " + role);
      }
    }
  }

  @Test
  void theHolderCountsItsLeaseLostBeforeTheDatabaseDoes() throws SQLException {
    LeaderLease a =
        new LeaderLease(TABLES, "orders", "a", Duration.ofSeconds(10), FENCE_WAIT, clock::get);
    assertThat(a.tryAcquire(session())).isTrue();

    clock.addAndGet(Duration.ofMillis(7_900).toNanos());
    assertThat(a.held()).isTrue();
    clock.addAndGet(Duration.ofMillis(200).toNanos()); // past 80 % of the lease: a frozen process
    assertThat(a.held()).isFalse();
  }

  @Test
  void theEpochPredicateFencesTheOldEpoch() throws SQLException {
    LeaderLease a = lease("a");
    LeaderLease b = lease("b");
    Connection sa = session();
    assertThat(a.tryAcquire(sa)).isTrue();
    long old = a.epoch();
    sa.close();
    Connection sb = session();
    await().atMost(Duration.ofSeconds(5)).until(() -> b.tryAcquire(sb));

    try (Connection c = session()) {
      assertThat(epochIsCurrent(c, old)).isFalse();
      assertThat(epochIsCurrent(c, b.epoch())).isTrue();
    }
  }

  @Test
  void aTakeOverWaitsForTheOldClaimsThenEndsThoseStillOpen() throws Exception {
    LeaderLease a = lease("a");
    // Long enough for the test to settle one claim while B waits, on a loaded machine.
    LeaderLease b =
        new LeaderLease(TABLES, "orders", "b", LEASE, Duration.ofSeconds(3), Ticker.SYSTEM);
    Connection sa = session();
    assertThat(a.tryAcquire(sa)).isTrue();
    Connection settled = openClaim(a);
    Connection abandoned = openClaim(a);
    sa.close(); // A lost its leader session; its two claims are still open

    Connection sb = session();
    CompletableFuture<Boolean> takeOver =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return b.tryAcquire(sb);
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    // A new claim finds the fence taken while B waits for the old claims.
    await().atMost(Duration.ofSeconds(5)).until(() -> !fenceFree(a));
    assertThat(takeOver).isNotDone();

    settled.commit(); // one old claim settles in time
    assertThat(takeOver.get()).isTrue();
    assertThat(settled.isValid(2)).isTrue();
    // The other was still open after the fence wait: ended, its work rolled back.
    assertThat(abandoned.isValid(2)).isFalse();
    assertThat(fenceFree(b)).isTrue();
  }

  @Test
  void aTakeOverEndsOldClaimsEvenWhenTheSessionsStatementTimeoutIsShorterThanTheFenceWait()
      throws Exception {
    LeaderLease a = lease("a");
    LeaderLease b =
        new LeaderLease(TABLES, "orders", "b", LEASE, Duration.ofSeconds(1), Ticker.SYSTEM);
    Connection sa = session();
    assertThat(a.tryAcquire(sa)).isTrue();
    Connection abandoned = openClaim(a);
    sa.close();

    Connection sb = session();
    sb.createStatement().execute("SET statement_timeout = 200");
    assertThat(b.tryAcquire(sb)).isTrue();
    assertThat(abandoned.isValid(2)).isFalse();
  }

  /** A claim transaction of {@code lease}: holds the fence lock, shared. */
  private Connection openClaim(LeaderLease lease) throws SQLException {
    Connection c = db.connect();
    sessions.add(c);
    c.setAutoCommit(false);
    try (PreparedStatement ps = c.prepareStatement(LeaderLease.fenceOnlySql())) {
      lease.bindFence(ps, 1);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getBoolean(1)).isTrue();
      }
    }
    return c;
  }

  private boolean fenceFree(LeaderLease lease) throws SQLException {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(LeaderLease.fenceOnlySql())) {
        lease.bindFence(ps, 1);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getBoolean(1);
        }
      } finally {
        c.rollback();
      }
    }
  }

  private static boolean epochIsCurrent(Connection c, long epoch) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT " + LeaderLease.epochPredicate(TABLES.qualifiedLeaderTable()))) {
      ps.setString(1, "orders");
      ps.setLong(2, epoch);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }
}
