package io.outbox.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A PgBouncer of a test's own, run from the machine's {@code pgbouncer} (Debian's package, which
 * {@code scripts/services.sh up} installs) on a free port in front of the shared PostgreSQL of
 * {@link Services}, with trust authentication for its user and the pool mode the test asks for.
 * PgBouncer refuses to run as root: a test run as root starts it with {@code -u postgres}, which
 * reads the configuration and then switches user in the same process (a {@code runuser} wrapper
 * would be the process the test stops, not PgBouncer).
 *
 * <p>It ignores the {@code options} startup parameter (the polling source sends its session
 * settings in it; PgBouncer refuses a connection that carries it otherwise).
 */
public final class PrivatePgBouncer extends PrivateServer {

  /** PgBouncer's {@code pool_mode}. */
  public enum PoolMode {
    SESSION,
    TRANSACTION,
    STATEMENT
  }

  private PrivatePgBouncer(PoolMode mode, boolean roundRobin) {
    super("pgbouncer", (port, dir) -> arguments(port, dir, mode, roundRobin));
  }

  /**
   * Starts a PgBouncer with {@code mode} and waits until it accepts connections.
   *
   * @throws IllegalStateException when pgbouncer is missing or does not come up
   */
  public static PrivatePgBouncer start(PoolMode mode) {
    return new PrivatePgBouncer(mode, false);
  }

  /**
   * As {@link #start(PoolMode)}, handing idle server connections out in turn ({@code
   * server_round_robin = 1}) instead of the one used last.
   */
  public static PrivatePgBouncer startRoundRobin(PoolMode mode) {
    return new PrivatePgBouncer(mode, true);
  }

  /** A JDBC URL of {@code database} through this PgBouncer. */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://" + HOST + ":" + port() + "/" + database;
  }

  private static List<String> arguments(int port, Path dir, PoolMode mode, boolean roundRobin) {
    Path ini = dir.resolve("pgbouncer.ini");
    Path users = dir.resolve("userlist.txt");
    try {
      Files.writeString(users, "\"" + Services.pgUser() + "\" \"\"\n", StandardCharsets.UTF_8);
      Files.writeString(
          ini,
          String.join(
              "\n",
              "[databases]",
              "* = host=" + Services.pgHost() + " port=" + Services.pgPort(),
              "[pgbouncer]",
              "listen_addr = " + HOST,
              "listen_port = " + port,
              "unix_socket_dir =",
              "auth_type = trust",
              "auth_file = " + users,
              "pool_mode = " + mode.name().toLowerCase(java.util.Locale.ROOT),
              "server_round_robin = " + (roundRobin ? 1 : 0),
              "ignore_startup_parameters = options",
              "max_client_conn = 200",
              "default_pool_size = 20",
              ""),
          StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the configuration of a private pgbouncer", e);
    }
    List<String> args = new ArrayList<>();
    if ("root".equals(System.getProperty("user.name"))) {
      args.addAll(List.of("-u", "postgres"));
    }
    args.add(ini.toString());
    return args;
  }
}
