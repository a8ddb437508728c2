package io.outbox.sink.redis;

import io.outbox.relay.spi.Deadline;
import java.time.Duration;
import java.util.NoSuchElementException;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.SslOptions;
import redis.clients.jedis.SslVerifyMode;
import redis.clients.jedis.exceptions.JedisException;

/**
 * At most {@code connections} connections to Redis, each lent to one batch at a time (Jedis's
 * {@link ConnectionPool}, on commons-pool2): opened when none is idle, the most recently given back
 * lent first, kept while healthy, closed once broken (a connection that failed mid-pipeline may
 * still hold replies of the old batch, so it is never lent again).
 */
final class RedisConnections implements AutoCloseable {

  private final HostAndPort address;
  private final DefaultJedisClientConfig.Builder builder;
  private final ConnectionPool pool;

  RedisConnections(String pipeline, RedisSinkSettings settings) {
    this.address = new HostAndPort(settings.host(), settings.port());
    int millis = (int) Math.min(Integer.MAX_VALUE, settings.timeout().toMillis());
    DefaultJedisClientConfig.Builder config =
        DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis(millis)
            .socketTimeoutMillis(millis)
            .user(settings.user())
            .password(settings.effectivePassword())
            .database(settings.database())
            .clientName("outbox-relay-" + pipeline.replaceAll("[^A-Za-z0-9_.-]", "_"));
    if (settings.tls()) {
      // The JVM's trust store; the certificate must name the host (FULL verification).
      config.sslOptions(SslOptions.builder().sslVerifyMode(SslVerifyMode.FULL).build());
    }
    this.builder = config;
    this.pool = new ConnectionPool(address, config.build(), poolConfig(settings.connections()));
  }

  /**
   * Lends up to {@code size} at once and keeps every one given back healthy; no checks by PING (a
   * broken connection is known by {@link Connection#isBroken} or by the batch that broke it), no
   * evictor thread, no JMX registration.
   */
  private static GenericObjectPoolConfig<Connection> poolConfig(int size) {
    GenericObjectPoolConfig<Connection> config = new GenericObjectPoolConfig<>();
    config.setMaxTotal(size);
    config.setMaxIdle(size);
    config.setLifo(true);
    config.setBlockWhenExhausted(true);
    config.setJmxEnabled(false);
    return config;
  }

  /**
   * A connection for one batch (a {@link Jedis} on a pooled connection), waiting at most until
   * {@code deadline} for a free one; {@code null} when none came free in time. A new connection
   * connects here; a failed connect throws and frees its place.
   *
   * @throws IllegalStateException once closed
   */
  Jedis borrow(Deadline deadline) throws InterruptedException {
    if (pool.isClosed()) {
      throw new IllegalStateException("the Redis sink is closed");
    }
    try {
      return new Jedis(pool.borrowObject(Duration.ofNanos(deadline.nanosLeft())));
    } catch (NoSuchElementException e) {
      // Without a cause: none came free in time; with one: a new connection failed its set-up.
      if (e.getCause() instanceof JedisException cause) {
        throw cause;
      }
      return null;
    } catch (InterruptedException | RuntimeException e) {
      throw e;
    } catch (Exception e) { // Jedis's connection factory throws only the above
      throw new IllegalStateException(e);
    }
  }

  /** A connection outside the pool whose connect and replies must come within {@code timeout}. */
  Jedis probeConnection(Duration timeout) {
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    synchronized (builder) {
      return new Jedis(
          address, builder.connectionTimeoutMillis(millis).socketTimeoutMillis(millis).build());
    }
  }

  /**
   * Takes back a connection from {@link #borrow}; a broken one is closed, as are all once closed.
   */
  void giveBack(Jedis jedis, boolean broken) {
    Connection connection = jedis.getConnection();
    if (!broken && !connection.isBroken()) {
      pool.returnResource(connection);
      return;
    }
    try {
      pool.returnBrokenResource(connection);
    } catch (JedisException e) {
      // The pool opens a connection in its place for a batch waiting for one, and that failed
      // (the server is down, say): the waiter's batch ends when its time is up; this one has.
    }
  }

  /** Closes the idle connections; those still lent are closed when they come back. */
  @Override
  public void close() {
    pool.close();
  }
}
