package io.outbox.source.cdc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.source.cdc.engine.EngineSockets;
import io.outbox.source.postgres.ClaimSessionPlans;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;
import org.postgresql.Driver;

/**
 * Opens the CDC source's own sessions (leader lock, checks, settlements, sweep, offsets) and tells
 * the engine where the database is. Every session, the engine's included, gives a silent connection
 * up after {@code socket-timeout}. The password is only ever handed to the driver and the engine.
 */
public final class CdcConnections {

  private final DatabaseSettings database;
  private final CdcSettings settings;
  private final String pipeline;
  private final Driver driver = new Driver();
  private final Properties parsed;

  public CdcConnections(DatabaseSettings database, CdcSettings settings, String pipeline) {
    this.database = database;
    this.settings = settings;
    this.pipeline = pipeline;
    this.parsed = Driver.parseURL(database.url(), null);
    if (parsed == null) {
      throw new IllegalArgumentException(
          "pipeline " + pipeline + ": database.url is not a jdbc:postgresql: URL");
    }
  }

  /**
   * The database name of a JDBC URL.
   *
   * @throws IllegalArgumentException when it is not a {@code jdbc:postgresql:} URL
   */
  static String databaseName(String url) {
    Properties p = Driver.parseURL(url, null);
    if (p == null) {
      throw new IllegalArgumentException("database.url is not a jdbc:postgresql: URL");
    }
    return p.getProperty("PGDBNAME", "");
  }

  /** The first host of the URL. */
  public String host() {
    return first(parsed.getProperty("PGHOST", "localhost"));
  }

  /** The first port of the URL. */
  public int port() {
    return Integer.parseInt(first(parsed.getProperty("PGPORT", "5432")));
  }

  /** The database name. */
  public String databaseName() {
    return parsed.getProperty("PGDBNAME");
  }

  /** The user: the configured one, else the URL's. */
  public String user() {
    return database.user() != null ? database.user() : parsed.getProperty("user");
  }

  /** The password: the configured one, else the URL's; never printed. */
  public String password() {
    return database.password() != null ? database.password() : parsed.getProperty("password");
  }

  /** {@code host:port/database}, without credentials, for logs and messages. */
  public String where() {
    return host() + ":" + port() + "/" + databaseName();
  }

  /**
   * pgjdbc's {@code socketTimeout} for every session, the engine's too: the user's driver property
   * when set, else {@code socket-timeout} in whole seconds.
   */
  public String socketTimeoutSeconds() {
    String configured = database.properties().get("socketTimeout");
    if (configured != null) {
      return configured;
    }
    long millis = settings.socketTimeout().toMillis();
    return Long.toString(Math.max(1, (millis + 999) / 1000));
  }

  private static String first(String list) {
    int comma = list.indexOf(',');
    return comma < 0 ? list : list.substring(0, comma);
  }

  /**
   * A pool for settlements: one connection per lane plus one for the sweep, in manual-commit mode.
   */
  HikariDataSource pool(int lanes) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("outbox-relay-" + pipeline + "-cdc");
    config.setJdbcUrl(database.url());
    config.setDriverClassName(Driver.class.getName());
    Properties properties = properties("outbox-relay " + pipeline + " cdc settle");
    ClaimSessionPlans.addTo(properties, database.partitions());
    properties.remove("user");
    properties.remove("password");
    config.setDataSourceProperties(properties);
    if (user() != null) {
      config.setUsername(user());
    }
    if (password() != null) {
      config.setPassword(password());
    }
    config.setMaximumPoolSize(lanes + 1);
    config.setMinimumIdle(1);
    config.setAutoCommit(false);
    config.setConnectionTimeout(settings.connectionTimeout().toMillis());
    config.setInitializationFailTimeout(-1); // fail on first use, with the driver's message
    return new HikariDataSource(config);
  }

  /**
   * A new session in autocommit mode.
   *
   * @param role what the session is for, shown in {@code pg_stat_activity.application_name}
   */
  public Connection dedicated(String role) throws SQLException {
    return dedicatedNamed("outbox-relay " + pipeline + " cdc " + role);
  }

  /**
   * As {@link #dedicated}, for a session that reads pending outbox rows in id order (the catch-up,
   * the sweep): planned as the claims are ({@link ClaimSessionPlans}).
   */
  public Connection dedicatedReader(String role) throws SQLException {
    Properties properties = properties("outbox-relay " + pipeline + " cdc " + role);
    ClaimSessionPlans.addTo(properties, database.partitions());
    return connect(properties);
  }

  /**
   * As {@link #dedicated}, its socket opened by a session's {@link EngineSockets} (named by {@code
   * sockets}; {@code null}: a plain socket), unless the user named a socket factory of their own.
   */
  public Connection dedicatedThrough(String role, String sockets) throws SQLException {
    Properties properties = properties("outbox-relay " + pipeline + " cdc " + role);
    EngineSockets.use(properties, "", sockets);
    return connect(properties);
  }

  /** A new session in autocommit mode, shown as {@code applicationName}. */
  public Connection dedicatedNamed(String applicationName) throws SQLException {
    return connect(properties(applicationName));
  }

  private Connection connect(Properties properties) throws SQLException {
    Connection connection = driver.connect(database.url(), properties);
    if (connection == null) {
      throw new SQLException("not a PostgreSQL JDBC URL: " + where());
    }
    return connection;
  }

  private Properties properties(String applicationName) {
    Properties properties = new Properties();
    properties.setProperty("ApplicationName", applicationName);
    properties.setProperty("tcpKeepAlive", "true");
    long seconds = Math.max(1, (settings.connectionTimeout().toMillis() + 999) / 1000);
    properties.setProperty("connectTimeout", Long.toString(seconds));
    properties.setProperty("loginTimeout", Long.toString(seconds));
    properties.setProperty("socketTimeout", socketTimeoutSeconds());
    properties.putAll(database.properties()); // the user's properties win
    if (database.user() != null) {
      properties.setProperty("user", database.user());
    }
    if (database.password() != null) {
      properties.setProperty("password", database.password());
    }
    return properties;
  }
}
