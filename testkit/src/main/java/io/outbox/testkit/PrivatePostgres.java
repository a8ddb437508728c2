package io.outbox.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL cluster of a test's own, made with the machine's {@code initdb} in a temporary
 * directory and started with {@code pg_ctl} on a free port of {@code 127.0.0.1}: TLS only ({@code
 * hostssl}, the server certificate of the given {@link TestCertificates}) and password
 * authentication (scram-sha-256) for every role, so the shared cluster is never touched. When the
 * test runs as root, the cluster runs as the {@code postgres} OS user (PostgreSQL refuses root).
 */
public final class PrivatePostgres implements AutoCloseable {

  /** The superuser {@code initdb} creates. */
  public static final String ADMIN = "admin";

  private static final String HOST = "127.0.0.1";
  private static final long TIMEOUT_S = 60;

  private final ServerHome home;
  private final Path dir;
  private final Path bin;
  private final int port;
  private final TestCertificates certificates;
  private final String adminPassword;

  private PrivatePostgres(
      ServerHome home, Path bin, int port, TestCertificates certificates, String adminPassword) {
    this.home = home;
    this.dir = home.dir();
    this.bin = bin;
    this.port = port;
    this.certificates = certificates;
    this.adminPassword = adminPassword;
  }

  /**
   * Creates and starts a cluster whose superuser {@value #ADMIN} has {@code adminPassword}.
   *
   * @throws IllegalStateException when PostgreSQL's binaries are missing or the cluster does not
   *     start (with its log)
   */
  public static PrivatePostgres start(TestCertificates certificates, String adminPassword) {
    return start(certificates, adminPassword, new String[0]);
  }

  /**
   * As {@link #start(TestCertificates, String)}, with server settings ({@code "wal_level=logical"},
   * each passed as {@code -c}).
   */
  public static PrivatePostgres start(
      TestCertificates certificates, String adminPassword, String... settings) {
    Path bin = binDirectory();
    ServerHome home = ServerHome.create("postgres");
    Path dir = home.dir();
    try {
      Files.copy(certificates.serverCertificate(), dir.resolve("server.pem"));
      Files.copy(certificates.serverKey(), dir.resolve("server.key"));
      Files.setPosixFilePermissions(
          dir.resolve("server.key"), PosixFilePermissions.fromString("rw-------"));
      Files.writeString(dir.resolve("pwfile"), adminPassword + "\n", StandardCharsets.UTF_8);
      Files.writeString(
          dir.resolve("pg_hba.conf"),
          "local all all scram-sha-256\nhostssl all all 127.0.0.1/32 scram-sha-256\n",
          StandardCharsets.UTF_8);
      chownToPostgres(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare a directory for a private PostgreSQL", e);
    }
    int port = LocalPorts.free(HOST, 1)[0];
    PrivatePostgres pg = new PrivatePostgres(home, bin, port, certificates, adminPassword);
    home.reapWith(pg::stopNow);
    try {
      pg.run(
          "initdb",
          "-D",
          dir.resolve("data").toString(),
          "-U",
          ADMIN,
          "--pwfile=" + dir.resolve("pwfile"),
          "-A",
          "scram-sha-256",
          "-E",
          "UTF8",
          "--no-sync");
      Files.delete(dir.resolve("pwfile"));
      pg.pgCtl(
          "start",
          "-o",
          String.join(
              " ",
              "-p " + port,
              "-c listen_addresses=" + HOST,
              "-c unix_socket_directories=" + dir,
              "-c ssl=on",
              "-c ssl_cert_file=" + dir.resolve("server.pem"),
              "-c ssl_key_file=" + dir.resolve("server.key"),
              "-c hba_file=" + dir.resolve("pg_hba.conf"),
              "-c fsync=off",
              "-c max_connections=40",
              java.util.Arrays.stream(settings)
                  .map(setting -> "-c " + setting)
                  .collect(java.util.stream.Collectors.joining(" "))));
    } catch (IOException | RuntimeException e) {
      pg.close();
      throw e instanceof RuntimeException r ? r : new UncheckedIOException((IOException) e);
    }
    return pg;
  }

  /** The port on {@code 127.0.0.1}. */
  public int port() {
    return port;
  }

  /**
   * A JDBC URL of {@code database} at {@code host} (which must be named by the server certificate
   * for verify-full) that verifies the server against {@code trusted}'s CA.
   */
  public String url(String host, String database, TestCertificates trusted) {
    return "jdbc:postgresql://"
        + host
        + ":"
        + port
        + "/"
        + database
        + "?sslmode=verify-full&sslrootcert="
        + trusted.caCertificate();
  }

  /** {@link #url(String, String, TestCertificates)} at {@code localhost}, trusting its own CA. */
  public String url(String database) {
    return url("localhost", database, certificates);
  }

  /** A connection of the superuser to {@code database}, over verified TLS. */
  public Connection connectAsAdmin(String database) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", ADMIN);
    p.setProperty("password", adminPassword);
    return DriverManager.getConnection(url(database), p);
  }

  /** Creates the database {@code name} on this cluster, as the superuser. */
  public void createDatabase(String name) throws SQLException {
    Sql.execute(() -> connectAsAdmin("postgres"), "CREATE DATABASE " + name);
  }

  /**
   * Restarts the cluster with {@code pg_ctl restart -m <mode>} on the same port and settings, and
   * returns once it accepts connections again: {@code "fast"} (sessions are ended, a checkpoint is
   * written) or {@code "immediate"} (every process is killed at once; the restart recovers from the
   * WAL, as after a crash).
   */
  public synchronized void restart(String mode) {
    try {
      pgCtl("restart", "-m", mode);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot restart " + this, e);
    }
  }

  /** The server's log so far. */
  public String log() {
    try {
      return Files.readString(dir.resolve("postgres.log"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(cannot read " + dir.resolve("postgres.log") + ": " + e.getMessage() + ")";
    }
  }

  /** Stops the cluster (fast shutdown) and deletes its directory. Idempotent. */
  @Override
  public synchronized void close() {
    home.close(() -> stop("fast"));
  }

  /** When the test JVM ends without {@link #close()}: no cluster outlives it. */
  private void stopNow() {
    stop("immediate");
  }

  private void stop(String mode) {
    if (Files.exists(dir.resolve("data/postmaster.pid"))) {
      try {
        run("pg_ctl", "-D", dir.resolve("data").toString(), "-m", mode, "-w", "stop");
      } catch (IOException | RuntimeException e) {
        // Deleting the directory still frees the disk; the port is freed with the process.
      }
    }
  }

  @Override
  public String toString() {
    return "PrivatePostgres[" + HOST + ":" + port + ", " + dir + "]";
  }

  /**
   * Runs {@code pg_ctl <action>} on this cluster's data directory and log, with {@code options},
   * waiting up to {@link #TIMEOUT_S} for the server to start or stop.
   */
  private void pgCtl(String action, String... options) throws IOException {
    List<String> args =
        new ArrayList<>(
            List.of(
                "-D",
                dir.resolve("data").toString(),
                "-l",
                dir.resolve("postgres.log").toString(),
                "-w",
                "-t",
                Long.toString(TIMEOUT_S)));
    args.addAll(List.of(options));
    args.add(action);
    run("pg_ctl", args.toArray(String[]::new));
  }

  /** Runs a PostgreSQL program, as the postgres OS user when we are root. */
  private void run(String program, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    if (isRoot()) {
      command.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    command.add(bin.resolve(program).toString());
    command.addAll(List.of(args));
    Path output = Files.createTempFile("outbox-private-pg-", ".out");
    try {
      Process p =
          new ProcessBuilder(command)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(output.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
              .start();
      if (!p.waitFor(TIMEOUT_S + 10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(program + " did not finish within " + TIMEOUT_S + " s");
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", command)
                + " failed with exit code "
                + p.exitValue()
                + ":\n"
                + Files.readString(output)
                + (Files.exists(dir.resolve("postgres.log")) ? "\nserver log:\n" + log() : ""));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + program, e);
    } finally {
      Files.deleteIfExists(output);
    }
  }

  private static boolean isRoot() {
    return "root".equals(System.getProperty("user.name"));
  }

  private static void chownToPostgres(Path dir) throws IOException {
    if (!isRoot()) {
      return;
    }
    UserPrincipal postgres =
        dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.toList()) {
        Files.setOwner(p, postgres);
      }
    }
  }

  /** The newest {@code /usr/lib/postgresql/<version>/bin} holding initdb. */
  private static Path binDirectory() {
    Path root = Path.of("/usr/lib/postgresql");
    try (Stream<Path> versions = Files.isDirectory(root) ? Files.list(root) : Stream.empty()) {
      return versions
          .filter(v -> v.getFileName().toString().matches("\\d+"))
          .max(Comparator.comparingInt(v -> Integer.parseInt(v.getFileName().toString())))
          .map(v -> v.resolve("bin"))
          .filter(b -> Files.isExecutable(b.resolve("initdb")))
          .orElseThrow(
              () ->
                  new IllegalStateException(
                      "no PostgreSQL server binaries (initdb) under "
                          + root
                          + "; scripts/services.sh up installs PostgreSQL"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + root, e);
    }
  }
}
