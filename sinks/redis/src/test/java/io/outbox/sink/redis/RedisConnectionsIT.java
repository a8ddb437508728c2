package io.outbox.sink.redis;

import static io.outbox.sink.redis.RedisConnectionsTest.settings;
import static io.outbox.sink.redis.RedisConnectionsTest.soon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.Ticker;
import io.outbox.testkit.PrivateRedis;
import io.outbox.testkit.RedisTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.Teardown;
import java.lang.Thread.State;
import java.time.Duration;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.params.ClientKillParams;

/** The sink's connection pool against a real server: how it lends, keeps and closes connections. */
class RedisConnectionsIT {

  @RegisterExtension final Teardown teardown = new Teardown();

  private final RedisConnections pool =
      teardown.add(
          new RedisConnections(
              "p", settings("uri = \"" + Services.redisUri() + "\"\nconnections = 2")));

  private Connection borrow() throws InterruptedException {
    Jedis jedis = pool.borrow(soon());
    return jedis == null ? null : jedis.getConnection();
  }

  private void giveBack(Connection connection, boolean broken) {
    pool.giveBack(new Jedis(connection), broken);
  }

  @Test
  void lendsAtMostConnectionsAtOnceAndReusesAHealthyOne() throws Exception {
    Connection a = borrow();
    Connection b = borrow();
    assertThat(borrow()).isNull(); // both lent: none came free before the deadline
    giveBack(a, false);
    assertThat(borrow()).isSameAs(a);
    giveBack(a, false);
    giveBack(b, false);
    assertThat(borrow()).isSameAs(b); // the most recently given back first
    giveBack(b, false);
    assertThat(a.isConnected()).isTrue();
    assertThat(b.isConnected()).isTrue();
  }

  @Test
  void aBrokenConnectionIsClosedNotLentAgain() throws Exception {
    Connection a = borrow();
    assertThat(new Jedis(a).ping()).isEqualTo("PONG");
    giveBack(a, true); // failed mid-batch
    assertThat(a.isConnected()).isFalse();
    Connection b = borrow();
    assertThat(b).isNotSameAs(a);
    // Broken while lent, though the batch did not say so: Jedis knows.
    RedisTestSupport admin = teardown.add(RedisTestSupport.connect(Services.redisUri()));
    Jedis onB = new Jedis(b);
    admin.jedis().clientKill(ClientKillParams.clientKillParams().id(Long.toString(onB.clientId())));
    assertThatThrownBy(onB::ping).isInstanceOf(JedisConnectionException.class);
    assertThat(b.isBroken()).isTrue();
    giveBack(b, false);
    assertThat(b.isConnected()).isFalse();
    Connection c = borrow();
    assertThat(c).isNotIn(a, b);
    assertThat(new Jedis(c).ping()).isEqualTo("PONG");
    giveBack(c, false);
  }

  /**
   * A broken connection given back while another batch waits: the pool opens a connection in its
   * place for the waiter; with the server down that fails, and the batch giving back must not fail
   * for it (the waiter's batch ends when its time is up).
   */
  @Test
  void givingBackABrokenConnectionWhileTheServerIsDownAndABatchWaitsDoesNotThrow()
      throws Exception {
    PrivateRedis server = teardown.add(PrivateRedis.start());
    RedisConnections small =
        teardown.add(
            new RedisConnections(
                "p", settings("uri = \"" + server.uri() + "\"\nconnections = 1\ntimeout = 2s")));
    Jedis lent = small.borrow(soon());
    FutureTask<Jedis> waiter =
        new FutureTask<>(() -> small.borrow(Ticker.SYSTEM.deadline(Duration.ofSeconds(3))));
    Thread waiting = new Thread(waiter, "waiting-batch");
    waiting.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> waiting.getState() == State.TIMED_WAITING);
    server.stop();

    small.giveBack(lent, true);

    assertThat(lent.isConnected()).isFalse();
    // None came free in time: the connection opened for it failed on the giving-back thread.
    assertThat(waiter.get(10, TimeUnit.SECONDS)).isNull();
  }

  @Test
  void closeClosesTheIdleOnesAndLaterReturnsAndRefusesNewBorrows() throws Exception {
    Connection a = borrow();
    Connection b = borrow();
    giveBack(a, false);
    pool.close();
    assertThat(a.isConnected()).isFalse();
    assertThat(b.isConnected()).isTrue(); // still lent
    giveBack(b, false);
    assertThat(b.isConnected()).isFalse();
    assertThatThrownBy(this::borrow)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("the Redis sink is closed");
  }
}
