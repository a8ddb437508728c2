package io.outbox.source.polling;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.source.postgres.ClaimSessionPlans;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Pattern;
import org.postgresql.Driver;

/**
 * Opens the source's connections: the claim pool, and the dedicated sessions for the leader lock
 * and for {@code LISTEN}. Every session gets the same timeouts, on both sides: the driver gives a
 * silent connection up after {@code socket-timeout}, the server a vanished client after about twice
 * {@code server-keepalive}. The password is only ever handed to the driver.
 */
final class Connections {

  private static final Pattern URL_PASSWORD = Pattern.compile("(?i)(password=)[^&]*");
  private static final Pattern URL_USERINFO = Pattern.compile("(//[^/@:]*:)[^/@]*@");

  private final DatabaseSettings database;
  private final PollingSettings settings;
  private final String pipeline;
  private final Driver driver = new Driver();

  Connections(DatabaseSettings database, PollingSettings settings, String pipeline) {
    this.database = database;
    this.settings = settings;
    this.pipeline = pipeline;
  }

  /** The URL without credentials, for logs and messages. */
  String safeUrl() {
    return redact(database.url());
  }

  static String redact(String url) {
    String noPassword = URL_PASSWORD.matcher(url).replaceAll("$1******");
    return URL_USERINFO.matcher(noPassword).replaceAll("$1******@");
  }

  /**
   * The pool of claim connections: one per lane, plus two spare so that a claim whose connection is
   * being replaced never waits for another lane.
   */
  HikariDataSource pool(int lanes) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("outbox-relay-" + pipeline + "-polling");
    config.setDriverClassName(Driver.class.getName());
    config.setJdbcUrl(database.url());
    if (database.user() != null) {
      config.setUsername(database.user());
    }
    if (database.password() != null) {
      config.setPassword(database.password());
    }
    Properties properties = driverProperties("claims", true);
    properties.remove("user");
    properties.remove("password");
    config.setDataSourceProperties(properties);
    // Per lane, its claim in flight and the one made ahead of it; two spare.
    config.setMaximumPoolSize(2 * lanes + 2);
    config.setMinimumIdle(1);
    config.setAutoCommit(false);
    config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
    config.setConnectionTimeout(settings.connectionTimeout().toMillis());
    // Fail on first use with the driver's own message, not while the pipeline is starting.
    config.setInitializationFailTimeout(-1);
    return new HikariDataSource(config);
  }

  /**
   * A session outside the pool, in autocommit mode.
   *
   * @param role what the session is for, shown in {@code pg_stat_activity.application_name}
   */
  Connection dedicated(String role) throws SQLException {
    Connection connection = driver.connect(database.url(), driverProperties(role, false));
    if (connection == null) {
      throw new SQLException("not a PostgreSQL JDBC URL: " + safeUrl());
    }
    return connection;
  }

  /** The driver properties of a session; {@code claims} for the pool's. */
  Properties driverProperties(String role, boolean claims) {
    Properties properties = new Properties();
    properties.setProperty("ApplicationName", "outbox-relay " + pipeline + " " + role);
    properties.setProperty("tcpKeepAlive", "true");
    long connectSeconds = Math.max(1, ceilSeconds(settings.connectionTimeout()));
    properties.setProperty("connectTimeout", Long.toString(connectSeconds));
    properties.setProperty("loginTimeout", Long.toString(connectSeconds));
    // A lost connection that was never reset (a half-open socket) fails a statement after this,
    // not after the kernel's retransmission timeout (about 15 minutes).
    properties.setProperty(
        "socketTimeout", Long.toString(Math.max(1, ceilSeconds(settings.socketTimeout()))));
    properties.putAll(database.properties()); // the user's properties win...
    // ...except the server settings the source relies on, sent in the startup packet (no round
    // trip, and never undone by a rollback), after the user's own options.
    String options = properties.getProperty("options", "");
    properties.setProperty("options", (options + " " + serverOptions(claims)).strip());
    if (database.user() != null) {
      properties.setProperty("user", database.user());
    }
    if (database.password() != null) {
      properties.setProperty("password", database.password());
    }
    return properties;
  }

  /** {@code -c name=value} options for the session; values are numbers, never user text. */
  private String serverOptions(boolean claims) {
    List<String> options = new ArrayList<>();
    options.add("-c statement_timeout=" + settings.statementTimeout().toMillis());
    if (claims) {
      options.add(ClaimSessionPlans.serverOptions(database.partitions()));
      options.add(
          "-c idle_in_transaction_session_timeout=" + settings.claimIdleTimeout().toMillis());
    } else {
      options.add("-c jit=off"); // the backlog's count over a large table, as for the claims
    }
    long keepalive = ceilSeconds(settings.serverKeepalive());
    if (keepalive > 0) {
      options.add("-c tcp_keepalives_idle=" + keepalive);
      options.add("-c tcp_keepalives_interval=" + Math.max(1, keepalive / 3));
      options.add("-c tcp_keepalives_count=3");
      // Keepalive probes only run while nothing is unacknowledged: with data in flight to a
      // vanished host (a NOTIFY, a result), the server would retransmit for minutes instead.
      options.add("-c tcp_user_timeout=" + 2 * keepalive * 1000);
    }
    return String.join(" ", options);
  }

  private static long ceilSeconds(Duration d) {
    return (d.toMillis() + 999) / 1000;
  }
}
