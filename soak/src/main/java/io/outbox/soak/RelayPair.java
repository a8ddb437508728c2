package io.outbox.soak;

import io.outbox.client.OutboxTables;
import io.outbox.source.postgres.LanePositions;
import io.outbox.testkit.FaultProxy;
import io.outbox.testkit.RelayProcess;
import io.outbox.testkit.Services;
import io.outbox.testkit.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * The two relay processes of the soak, {@code a} and {@code b}, on one pipeline: real {@code
 * outbox-relay run} JVMs, each reaching PostgreSQL through a {@link FaultProxy} of its own so that
 * one can be cut off from the database while the other is not. Knows which one holds the lease,
 * restarts what the soak stopped, and notices a process that exited without being told to.
 */
final class RelayPair implements AutoCloseable {
  static final String PIPELINE = "soak";
  static final String ACTIVE = "pipeline " + PIPELINE + ": active, ";
  private static final String STANDING_BY = "pipeline " + PIPELINE + ": another instance";
  private static final Duration START_TIMEOUT = Duration.ofMinutes(3);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

  /**
   * Every session of the soak's database but the writers' and this one: the relays' own (named
   * {@code outbox-relay <pipeline> <role>}) and those of the CDC source's Debezium engine (named by
   * Debezium), replication connections included.
   */
  private static final String TERMINATE_SESSIONS =
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
          + " WHERE datname = current_database() AND pid <> pg_backend_pid()"
          + " AND backend_type IN ('client backend', 'walsender')"
          + " AND application_name NOT LIKE '"
          + Workload.APPLICATION_NAME
          + "%'";

  private final TestDatabase db;
  private final Map<String, RelayProcess> processes = new LinkedHashMap<>(); // guarded by this
  private final Map<String, FaultProxy> proxies = new LinkedHashMap<>();

  private RelayPair(TestDatabase db) {
    this.db = db;
  }

  /**
   * Starts {@code a}, waits until it is active, then {@code b}, and waits until it stands by.
   *
   * @param config the relay configuration of an instance ({@code a} or {@code b}) for a database
   *     URL (the instance's proxy's)
   */
  static RelayPair start(Path dir, TestDatabase db, BiFunction<String, String, String> config) {
    RelayPair pair = new RelayPair(db);
    try {
      for (String name : List.of("a", "b")) {
        FaultProxy proxy = FaultProxy.start(Services.pgHost(), Services.pgPort());
        pair.proxies.put(name, proxy);
        String url = "jdbc:postgresql://" + proxy.address() + "/" + db.name();
        RelayProcess p = RelayProcess.start(name, dir, config.apply(name, url));
        synchronized (pair) {
          pair.processes.put(name, p);
        }
        String awaited = name.equals("a") ? ACTIVE : STANDING_BY;
        Waits.until(
            START_TIMEOUT,
            () -> p.logContains(awaited) || !p.isAlive(),
            "relay " + name + " to log '" + awaited + "'");
        if (!p.isAlive()) {
          throw new IllegalStateException(
              "relay " + name + " exited while starting; its log ends with:\n" + p.tail(40));
        }
      }
      return pair;
    } catch (RuntimeException e) {
      pair.close();
      throw e;
    }
  }

  synchronized RelayProcess process(String name) {
    return processes.get(name);
  }

  FaultProxy proxy(String name) {
    return proxies.get(name);
  }

  /** The instance whose lease is current, by the lease row's holder pid; empty when none. */
  Optional<String> active() {
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT holder FROM outbox_relay_leader WHERE pipeline = '"
                    + PIPELINE
                    + "' AND expires_at > now()")) {
      if (!rs.next()) {
        return Optional.empty();
      }
      String holder = rs.getString(1);
      synchronized (this) {
        return processes.entrySet().stream()
            .filter(e -> holder.endsWith("/" + e.getValue().pid()))
            .map(Map.Entry::getKey)
            .findFirst();
      }
    } catch (SQLException e) {
      return Optional.empty();
    }
  }

  /**
   * Whether some event was marked published at or after {@code t} (database clock), or, settling by
   * position, a lane's position moved then.
   */
  boolean publishedSince(Instant t) {
    try (Connection c = db.connect();
        java.sql.PreparedStatement ps =
            c.prepareStatement(
                "SELECT EXISTS (SELECT 1 FROM outbox WHERE published_at >= ?)"
                    + " OR EXISTS (SELECT 1 FROM outbox_relay_position WHERE updated_at >= ?)")) {
      ps.setTimestamp(1, java.sql.Timestamp.from(t));
      ps.setTimestamp(2, java.sql.Timestamp.from(t));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    } catch (SQLException e) {
      return false;
    }
  }

  /** The pipeline's pending rows, as {@code status} counts them (settled by position or not). */
  static long pending(TestDatabase db) throws SQLException {
    OutboxTables tables = OutboxTables.of("outbox", "outbox_dead_letter");
    try (Connection c = db.connect()) {
      return LanePositions.status(tables).backlog(c, PIPELINE).pending();
    }
  }

  /** SIGKILL, then the same relay started again. */
  void kill9AndRestart(String name) {
    RelayProcess p = process(name);
    p.kill9();
    replace(name, p.restart());
  }

  /**
   * SIGTERM, waits for the exit (SIGKILL after a minute), then starts the relay again.
   *
   * @return the exit code, or empty when it had to be killed
   */
  Optional<Integer> terminateAndRestart(String name) {
    RelayProcess p = process(name);
    Optional<Integer> code = p.terminate(STOP_TIMEOUT);
    if (code.isEmpty()) {
      p.kill9();
    }
    replace(name, p.restart());
    return code;
  }

  /** Ends every database session of both relays; returns how many were ended. */
  int terminateSessions() throws SQLException {
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(TERMINATE_SESSIONS)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /**
   * Relays that exited although the soak did not stop them: each is described (exit code, the end
   * of its log) and started again.
   */
  List<String> restartUnexpectedExits() {
    List<String> exits = new ArrayList<>();
    for (String name : List.of("a", "b")) {
      RelayProcess p = process(name);
      if (!p.isAlive()) {
        exits.add(
            "relay "
                + name
                + " (pid "
                + p.pid()
                + ") exited by itself with code "
                + p.awaitExit(Duration.ZERO).map(String::valueOf).orElse("?")
                + "; its log ends with: "
                + p.tail(5).replace('\n', ' '));
        replace(name, p.restart());
      }
    }
    return exits;
  }

  /** The first "active" log line of either relay in {@code [from, until)}, as a delay. */
  Optional<Duration> activeAgain(Instant from, Instant until) {
    Optional<Instant> first =
        List.of("a", "b").stream()
            .map(n -> process(n).loggedAt(ACTIVE, from))
            .flatMap(Optional::stream)
            .filter(t -> t.isBefore(until))
            .min(Instant::compareTo);
    return first.map(t -> Duration.between(from, t));
  }

  /** SIGTERM to both; their exit codes (empty: killed after a minute). */
  Map<String, Optional<Integer>> stop() {
    Map<String, Optional<Integer>> codes = new LinkedHashMap<>();
    for (String name : List.of("a", "b")) {
      RelayProcess p = process(name);
      if (p.isAlive()) {
        p.thaw(); // a stopped process does not act on SIGTERM until it runs again
      }
      Optional<Integer> code = p.terminate(STOP_TIMEOUT);
      if (code.isEmpty()) {
        p.kill9();
      }
      codes.put(name, code);
    }
    return codes;
  }

  /** The relays' log files. */
  List<Path> logs() {
    return List.of(process("a").logFile(), process("b").logFile());
  }

  private synchronized void replace(String name, RelayProcess p) {
    processes.put(name, p);
  }

  @Override
  public void close() {
    synchronized (this) {
      processes.values().stream().filter(RelayProcess::isAlive).forEach(RelayProcess::kill9);
    }
    proxies.values().forEach(FaultProxy::close);
  }
}
