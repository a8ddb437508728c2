package io.outbox.sink.redis;

import io.outbox.relay.spi.Sink;
import io.outbox.testkit.Delivered;
import io.outbox.testkit.LocalPorts;
import io.outbox.testkit.PrivateRedis;
import io.outbox.testkit.RedisTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.SinkContexts;
import io.outbox.testkit.SinkContract;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;

/**
 * The Redis sink passes the sink contract against the server of {@code scripts/services.sh}: a
 * destination is a stream key of its own; the invalid destination is a key holding a string.
 */
class RedisSinkContractIT extends SinkContract {

  private RedisTestSupport redis;

  @BeforeEach
  void connect() {
    redis = closeAfter(RedisTestSupport.connect(Services.redisUri()));
  }

  @Override
  protected String newDestination() {
    return redis.newKey("outbox.contract");
  }

  @Override
  protected Sink newSink(String extraSettings) {
    return create("uri = \"" + Services.redisUri() + "\"\n" + extraSettings);
  }

  @Override
  protected Sink newUnreachableSink() throws Exception {
    return create("uri = \"redis://127.0.0.1:" + LocalPorts.unbound() + "\"\ntimeout = 2s");
  }

  /**
   * A private server kept busy by a script for 30 ms out of every 40 ({@code busy-reply-threshold
   * 10}): from 10 ms into each run, every command answers BUSY (sink unavailable), and once the
   * script ends the next ones are taken, so a pipeline can meet both.
   */
  @Override
  protected Refusing refusingDestination() throws Exception {
    PrivateRedis server = closeAfter(PrivateRedis.start("--busy-reply-threshold", "10"));
    RedisTestSupport busy = closeAfter(RedisTestSupport.connect(server.uri()));
    String key = busy.newKey("outbox.contract.busy");
    ScheduledExecutorService scripts = Executors.newSingleThreadScheduledExecutor();
    closeAfter(scripts::shutdownNow);
    scripts.scheduleWithFixedDelay(
        () -> {
          try {
            busy.jedis().eval(BUSY_FOR_30_MS);
          } catch (RuntimeException e) {
            // the server goes at the end of the test
          }
        },
        10,
        10,
        TimeUnit.MILLISECONDS);
    return new Refusing(key, "uri = \"" + server.uri() + "\"", 0);
  }

  private static final String BUSY_FOR_30_MS =
      "local t = redis.call('TIME') local s = t[1] * 1000000 + t[2] repeat t = redis.call('TIME')"
          + " until (t[1] * 1000000 + t[2]) - s > 30000 return 1";

  /** A key that holds a string: XADD answers WRONGTYPE. */
  @Override
  protected String invalidDestination() {
    String key = redis.newKey("outbox.contract.string");
    redis.jedis().set(key, "not a stream");
    return key;
  }

  @Override
  protected List<Delivered> read(String key, int expected, Duration timeout) throws Exception {
    return redis.read(key, expected, timeout);
  }

  private static Sink create(String hocon) {
    return SinkContexts.sink(RedisSinkProvider.TYPE, hocon);
  }
}
