package io.outbox.source.postgres;

import io.outbox.admin.OutboxStatus.ConnectionOpener;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses at start-up a database reached through a pooler that shares server sessions between its
 * clients (PgBouncer's {@code pool_mode = transaction} or {@code statement}): the relay's lease is
 * a session advisory lock, its wake-ups use {@code LISTEN}, and its sessions keep prepared
 * statements and settings, all of which such a pooler hands to whichever client gets the server
 * session next, without an error. Shared by every source; a pooler in session mode passes.
 *
 * <p>How it tells: in session mode (or without a pooler) a client's statements all run in one
 * server process, which no other client uses while it is connected. Two client sessions, both in
 * autocommit, ask {@code pg_backend_pid()}: the first twice in a row, then the second; this repeats
 * {@value #ROUNDS} times. Session pooling answers one pid per client, the two pids different. Any
 * other answer (a client's pid changed, or both clients saw the same pid) proves that server
 * sessions move between clients: there are no false refusals. A pooler that moves them is caught in
 * the first round when its pool is otherwise idle, whatever its size or order: PgBouncer gives the
 * idle server session used last to the next client by default ({@code server_round_robin = 0}, so
 * the second client gets the first one's process), and with {@code server_round_robin = 1} the one
 * idle longest (so the first client's second statement gets another process, when there is
 * another). Other clients of a busy shared pool can take those sessions in between; the rounds make
 * that unlikely to hide the pooling, though not impossible.
 *
 * <p>Nothing PgBouncer answers on an ordinary connection names its pool mode ({@code SHOW
 * pool_mode} is only on its admin console, which the relay's role need not reach); behaviour is
 * what the relay depends on, so behaviour is what is checked. A database that cannot be reached, or
 * a pool too small for two sessions at once (the relay needs more anyway), is not judged here: the
 * check then says nothing and the source reports its own connection errors.
 */
public final class SessionPoolingCheck {

  private static final Logger log = LoggerFactory.getLogger(SessionPoolingCheck.class);
  static final int ROUNDS = 3;
  private static final String PID = "SELECT pg_backend_pid()";

  private SessionPoolingCheck() {}

  /**
   * The start-up problem, as one line, when the sessions of {@code open} are pooled by transaction
   * or statement; empty when they are sessions of their own or cannot be checked now.
   *
   * @param open opens a new session in autocommit mode (the source's dedicated sessions)
   * @param timeout how long a statement may take
   * @param pipeline for the log
   */
  public static List<String> startUpProblems(
      ConnectionOpener open, Duration timeout, String pipeline) {
    try {
      return problem(open, timeout).map(List::of).orElse(List.of());
    } catch (SQLException e) {
      log.debug(
          "pipeline {}: cannot check whether the database's sessions are pooled: {}",
          pipeline,
          e.getMessage());
      return List.of();
    }
  }

  /**
   * What is wrong, when server sessions move between clients.
   *
   * @throws SQLException when the sessions cannot be opened or asked
   */
  static Optional<String> problem(ConnectionOpener open, Duration timeout) throws SQLException {
    Executor inline = Runnable::run;
    int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
    try (Connection first = open.open();
        Connection second = open.open()) {
      first.setNetworkTimeout(inline, millis);
      second.setNetworkTimeout(inline, millis);
      Set<Integer> firstPids = new LinkedHashSet<>();
      Set<Integer> secondPids = new LinkedHashSet<>();
      for (int round = 0; round < ROUNDS; round++) {
        firstPids.add(pid(first));
        firstPids.add(pid(first));
        secondPids.add(pid(second));
        Optional<String> moved = verdict(firstPids, secondPids);
        if (moved.isPresent()) {
          return moved;
        }
      }
      return Optional.empty();
    }
  }

  /** The refusal when the pids two clients saw show server sessions moving between them. */
  static Optional<String> verdict(Set<Integer> firstPids, Set<Integer> secondPids) {
    List<Integer> shared = new ArrayList<>(firstPids);
    shared.retainAll(secondPids);
    String seen;
    if (firstPids.size() > 1) {
      seen = "one client session ran in server processes " + firstPids;
    } else if (secondPids.size() > 1) {
      seen = "one client session ran in server processes " + secondPids;
    } else if (!shared.isEmpty()) {
      seen = "two client sessions ran in the same server process " + shared.get(0);
    } else {
      return Optional.empty();
    }
    return Optional.of(
        "the database connection goes through a pooler that shares server sessions between"
            + " clients ("
            + seen
            + "), such as PgBouncer with pool_mode = transaction or statement; the relay's lease"
            + " (a session advisory lock), LISTEN and prepared statements need a session of their"
            + " own: connect to PostgreSQL directly or through pool_mode = session"
            + " (docs/compatibility.md)");
  }

  private static int pid(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(PID)) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
