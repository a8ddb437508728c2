package io.outbox.relay.it;

import io.outbox.testkit.Delivered;
import io.outbox.testkit.PrivateRedis;
import io.outbox.testkit.PrivateServer;
import io.outbox.testkit.RedisTestSupport;
import io.outbox.testkit.Services;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;

/**
 * The delivery scenarios with the Redis Streams sink: events go to the stream {@code
 * <prefix>.order}.
 */
@Tag("quick")
class RedisDeliveryIT extends SinkDeliveryScenarios {

  private final Map<String, RedisTestSupport> servers = new HashMap<>();
  private final Map<String, String> prefixes = new HashMap<>();

  @Override
  protected String sharedServer() {
    return Services.redisUri();
  }

  @Override
  protected PrivateServer startPrivateServer() {
    return PrivateRedis.start();
  }

  @Override
  protected String url(PrivateServer server) {
    return ((PrivateRedis) server).uri();
  }

  @Override
  protected String sink(String url) {
    // The markers of re-sent events expire within minutes on the shared server.
    return "type = redis, redis { uri = \"%s\", timeout = 2s, dedup-window = 5m }".formatted(url);
  }

  @Override
  protected void prepare(String url, String prefix) {
    servers.put(url, RedisTestSupport.connect(url));
    prefixes.put(url, prefix);
  }

  @Override
  protected List<Delivered> read(String url, String prefix, int expected) throws Exception {
    return servers.get(url).read(prefix + ".order", expected, Duration.ofSeconds(30));
  }

  /** A key that holds a string: WRONGTYPE. */
  @Override
  protected String poisonDestination(String url, String prefix) {
    RedisTestSupport redis = servers.get(url);
    String key = redis.newKey(prefix + ".poison");
    redis.jedis().set(key, "not a stream");
    return key;
  }

  @Override
  protected void cleanUp() {
    servers.forEach(
        (url, redis) -> {
          try {
            redis.jedis().del(prefixes.get(url) + ".order");
          } catch (RuntimeException e) {
            // a private server that is gone already
          }
          redis.close();
        });
  }
}
