package io.outbox.sink.redis;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.support.LendingPool;
import java.time.Duration;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.SslOptions;
import redis.clients.jedis.SslVerifyMode;

/**
 * At most {@code connections} connections to Redis, each lent to one batch at a time ({@link
 * LendingPool}): opened when needed, kept while healthy, closed once broken (a connection that
 * failed mid-pipeline may still hold replies of the old batch, so it is never lent again).
 */
final class RedisConnections implements AutoCloseable {

  private final HostAndPort address;
  private final DefaultJedisClientConfig.Builder builder;
  private final JedisClientConfig config;
  private final LendingPool<Jedis> pool;

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
    this.config = config.build();
    this.pool =
        new LendingPool<>(
            "the Redis sink", settings.connections(), j -> !j.isBroken(), Jedis::close);
  }

  /**
   * A connection for one batch, waiting at most until {@code deadline} for a free one; {@code null}
   * when none came free in time.
   */
  Jedis borrow(Deadline deadline) throws InterruptedException {
    return pool.borrow(deadline, () -> new Jedis(address, config)); // connects on first use
  }

  /** A connection outside the pool whose connect and replies must come within {@code timeout}. */
  Jedis probeConnection(Duration timeout) {
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    synchronized (builder) {
      return new Jedis(
          address, builder.connectionTimeoutMillis(millis).socketTimeoutMillis(millis).build());
    }
  }

  /** Takes back a connection; a broken one is closed. */
  void giveBack(Jedis jedis, boolean broken) {
    pool.giveBack(jedis, broken);
  }

  @Override
  public void close() {
    pool.close();
  }
}
