package io.outbox.sink.redis;

import static io.outbox.testkit.TestEvents.outcomes;
import static io.outbox.testkit.TestEvents.routed;
import static io.outbox.testkit.TestEvents.verdicts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.testkit.Delivered;
import io.outbox.testkit.PrivateRedis;
import io.outbox.testkit.RedisTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.SinkContexts;
import io.outbox.testkit.Teardown;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the Redis sink adds to the contract, against real servers. */
class RedisSinkIT {

  @RegisterExtension final Teardown teardown = new Teardown();

  @Test
  void aReSentEventIsAddedOnceWithinTheDedupWindowAndTwiceWithout() throws Exception {
    RedisTestSupport redis = redis(Services.redisUri());
    String key = redis.newKey("outbox.dedup");
    RoutedEvent event = routed(key, "k", "{}");
    Sink dedup = sink(Services.redisUri(), "dedup-key-prefix = \"" + key + ":added:\"");
    Sink plain = sink(Services.redisUri(), "dedup-window = 0s");

    assertThat(outcomes(dedup, List.of(event))).containsExactly(Outcome.PUBLISHED);
    assertThat(outcomes(dedup, List.of(event, routed(key, "k", "{}"))))
        .containsExactly(Outcome.PUBLISHED, Outcome.PUBLISHED);
    assertThat(redis.read(key, 2, Duration.ofSeconds(5))).hasSize(2);
    long ttl = redis.jedis().pttl(key + ":added:" + key + ":" + event.event().eventId());
    assertThat(ttl).isBetween(Duration.ofMinutes(59).toMillis(), Duration.ofHours(1).toMillis());
    redis.jedis().del(key + ":added:" + key + ":" + event.event().eventId());

    assertThat(outcomes(plain, List.of(event))).containsExactly(Outcome.PUBLISHED);
    List<String> ids =
        redis.read(key, 3, Duration.ofSeconds(5)).stream().map(Delivered::eventId).toList();
    assertThat(ids).hasSize(3).filteredOn(event.event().eventId().toString()::equals).hasSize(2);
  }

  @Test
  void aWrongTypeKeyIsPermanentAndLeavesNoMarkerBehind() throws Exception {
    RedisTestSupport redis = redis(Services.redisUri());
    String key = redis.newKey("outbox.wrongtype");
    redis.jedis().set(key, "a string");
    Sink sink = sink(Services.redisUri(), "");
    RoutedEvent event = routed(key, "k", "{}");

    List<Verdict> verdicts = verdicts(sink, List.of(event));
    assertThat(verdicts).extracting(Verdict::outcome).containsExactly(Outcome.PERMANENT);
    assertThat(verdicts.get(0).error()).contains("WRONGTYPE", key);

    redis.jedis().del(key);
    assertThat(outcomes(sink, List.of(event))).containsExactly(Outcome.PUBLISHED);
    assertThat(redis.read(key, 1, Duration.ofSeconds(5))).hasSize(1);
  }

  @Test
  void maxLenTrimsTheStreamToAboutItsLength() throws Exception {
    RedisTestSupport redis = redis(Services.redisUri());
    String key = redis.newKey("outbox.trimmed");
    Sink sink = sink(Services.redisUri(), "max-len = 100");
    List<RoutedEvent> batch = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      batch.add(routed(key, "k" + i % 7, "{\"n\":" + i + "}"));
    }
    assertThat(outcomes(sink, batch)).hasSize(1_000).containsOnly(Outcome.PUBLISHED);
    // MAXLEN ~ trims whole radix tree nodes (100 entries each by default): about 100, never 1000.
    assertThat(redis.length(key)).isBetween(100L, 300L);
  }

  @Test
  void aStoppedServerIsUnavailableAndTheSinkRecoversWhenItIsBack() throws Exception {
    PrivateRedis server = teardown.add(PrivateRedis.start());
    RedisTestSupport redis = redis(server.uri());
    String key = redis.newKey("outbox.outage");
    Sink sink = sink(server.uri(), "timeout = 2s");
    assertThat(outcomes(sink, List.of(routed(key, "k", "{\"n\":1}"))))
        .containsExactly(Outcome.PUBLISHED);

    server.stop();
    long start = System.nanoTime();
    assertThat(outcomes(sink, List.of(routed(key, "k", "{\"n\":2}"), routed(key, "j", "{}"))))
        .containsExactly(Outcome.SINK_UNAVAILABLE, Outcome.SINK_UNAVAILABLE);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    assertThat(sink.probe(Duration.ofSeconds(1))).isFalse();

    server.restart();
    await().atMost(Duration.ofSeconds(20)).until(() -> sink.probe(Duration.ofSeconds(1)));
    assertThat(outcomes(sink, List.of(routed(key, "k", "{\"n\":3}"))))
        .containsExactly(Outcome.PUBLISHED);
    assertThat(redis.read(key, 2, Duration.ofSeconds(5))).hasSize(2);
  }

  private RedisTestSupport redis(String uri) {
    return teardown.add(RedisTestSupport.connect(uri));
  }

  private Sink sink(String uri, String hocon) {
    Sink sink =
        new RedisSinkProvider()
            .create(
                SinkContexts.context(RedisSinkProvider.TYPE, "uri = \"" + uri + "\"\n" + hocon));
    return teardown.add(sink);
  }
}
