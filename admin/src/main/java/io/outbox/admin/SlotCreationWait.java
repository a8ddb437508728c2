package io.outbox.admin;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A relay session creating a pipeline's logical replication slot, and the transactions it waits
 * for: PostgreSQL makes a logical slot only once the transactions holding a transaction id when the
 * creation began (in any database of the cluster, prepared ones included) have ended. Read by the
 * CDC source while it waits (its log and gauge) and by {@code status}.
 *
 * @param pid the creating session's backend pid
 * @param waiting how long the creation has been running
 * @param blockers the transactions it waits for, oldest first; empty when none is visible (the
 *     creation is about to end, or the role cannot see the other sessions)
 */
public record SlotCreationWait(int pid, Duration waiting, List<Blocker> blockers) {

  /**
   * One transaction the creation waits for.
   *
   * @param pid its backend pid; {@code null} for a prepared transaction (no backend)
   * @param name the database and application of the session, or the prepared transaction's gid
   * @param age how long it has been open; {@code null} when the role may not see it
   */
  public record Blocker(Integer pid, String name, Duration age) {

    /** {@code pid 4711 (app/psql, open 125s)} or {@code prepared transaction 'x' (open 9s)}. */
    public String describe() {
      String who = pid == null ? "prepared transaction '" + name + "'" : "pid " + pid;
      String what = pid == null ? "" : name;
      String open = age == null ? "" : "open " + age.toSeconds() + "s";
      String detail = what.isEmpty() || open.isEmpty() ? what + open : what + ", " + open;
      return detail.isEmpty() ? who : who + " (" + detail + ")";
    }
  }

  public SlotCreationWait {
    blockers = List.copyOf(blockers);
  }

  // The creator's own transaction holds no id; the ones it waits for do. pg_blocking_pids names the
  // one it waits for right now, the xact_start test the others it will wait for next.
  private static final String SQL =
      "WITH creator AS (SELECT pid, query_start FROM pg_stat_activity"
          + " WHERE datname = current_database() AND application_name = left(?, 63)"
          + " AND state = 'active' ORDER BY query_start LIMIT 1)\n"
          + "SELECT c.pid, extract(epoch FROM now() - c.query_start), b.pid, b.name, b.age, b.since"
          + " FROM creator c LEFT JOIN LATERAL (\n"
          + "  SELECT a.pid, coalesce(a.datname, '?') || '/' || coalesce(a.application_name, '')"
          + " AS name, extract(epoch FROM now() - a.xact_start) AS age, a.xact_start AS since"
          + " FROM pg_stat_activity a WHERE a.pid <> c.pid"
          + " AND (a.pid = ANY (pg_blocking_pids(c.pid))"
          + " OR (a.backend_xid IS NOT NULL AND a.xact_start < c.query_start))\n"
          + "  UNION ALL\n"
          + "  SELECT NULL, p.gid, extract(epoch FROM now() - p.prepared), p.prepared"
          + " FROM pg_prepared_xacts p WHERE p.prepared < c.query_start\n"
          + ") b ON true ORDER BY b.since NULLS LAST";

  /** The {@code application_name} of the session that creates {@code pipeline}'s slot. */
  public static String sessionName(String pipeline) {
    return "outbox-relay " + pipeline + " cdc slot creation";
  }

  /**
   * The pipeline's slot creation under way in the connection's database, with what it waits for;
   * empty when none runs.
   */
  public static Optional<SlotCreationWait> read(Connection c, String pipeline) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SQL)) {
      ps.setString(1, sessionName(pipeline));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        int pid = rs.getInt(1);
        Duration waiting = seconds(rs.getDouble(2));
        List<Blocker> blockers = new ArrayList<>();
        do {
          String name = rs.getString(4);
          if (name == null) {
            continue; // no blocker (the LEFT JOIN's empty side)
          }
          int blocker = rs.getInt(3);
          Integer blockerPid = rs.wasNull() ? null : blocker;
          double age = rs.getDouble(5);
          blockers.add(new Blocker(blockerPid, name, rs.wasNull() ? null : seconds(age)));
        } while (rs.next());
        return Optional.of(new SlotCreationWait(pid, waiting, blockers));
      }
    }
  }

  /** The blockers, comma-separated; {@code none visible} when there are none. */
  public String describeBlockers() {
    return blockers.isEmpty()
        ? "none visible"
        : blockers.stream().map(Blocker::describe).collect(Collectors.joining(", "));
  }

  private static Duration seconds(double s) {
    return Duration.ofMillis(Math.round(s * 1000));
  }
}
