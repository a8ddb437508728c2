package io.outbox.sink.redis;

import io.outbox.relay.spi.Sink;
import io.outbox.testkit.Delivered;
import io.outbox.testkit.LocalPorts;
import io.outbox.testkit.RedisTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.SinkContexts;
import io.outbox.testkit.SinkContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.opentest4j.TestAbortedException;

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

  @Override
  protected Refusing refusingDestination() {
    throw new TestAbortedException(
        "Redis: no fixture yet makes the server refuse a write and take a later one (maxmemory with a"
            + " trimming client, issue #29); the sink takes its events' turns from PendingBatch,"
            + " whose unit tests cover the rule");
  }

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
