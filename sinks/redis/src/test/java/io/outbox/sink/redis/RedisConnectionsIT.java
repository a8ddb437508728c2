package io.outbox.sink.redis;

import static io.outbox.sink.redis.RedisConnectionsTest.settings;
import static io.outbox.sink.redis.RedisConnectionsTest.soon;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.testkit.RedisTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.Teardown;
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
