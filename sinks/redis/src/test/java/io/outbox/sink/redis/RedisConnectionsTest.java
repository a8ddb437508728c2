package io.outbox.sink.redis;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.testkit.SinkContexts;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.exceptions.JedisConnectionException;

/** The sink's connection pool where no server is needed (the rest: {@link RedisConnectionsIT}). */
class RedisConnectionsTest {

  @Test
  void aFailedConnectFreesItsPlace() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort(); // closed again: nothing listens there
    }
    try (RedisConnections pool =
        new RedisConnections(
            "p", settings("uri = \"redis://127.0.0.1:" + port + "\"\nconnections = 2"))) {
      for (int i = 0; i < 3; i++) { // more than its two places: each failure gave its place back
        assertThatThrownBy(() -> pool.borrow(soon())).isInstanceOf(JedisConnectionException.class);
      }
    }
  }

  static RedisSinkSettings settings(String hocon) {
    return SettingsReader.settings(
        SinkContexts.context("redis", hocon), RedisSinkSettings::read, "redis sink");
  }

  static Deadline soon() {
    return Ticker.SYSTEM.deadline(Duration.ofMillis(50));
  }
}
