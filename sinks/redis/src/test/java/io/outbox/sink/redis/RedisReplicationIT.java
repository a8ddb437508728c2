package io.outbox.sink.redis;

import static io.outbox.testkit.TestEvents.routed;
import static io.outbox.testkit.TestEvents.verdicts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.Verdict.Outcome;
import io.outbox.testkit.PrivateRedis;
import io.outbox.testkit.RedisTestSupport;
import io.outbox.testkit.SinkContexts;
import io.outbox.testkit.Teardown;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What an entry counted as published survives (issue #29 point 5): Redis answers an XADD from
 * memory, so a server that dies loses what it had not persisted or passed on, although the relay
 * settled it. With {@code wait-replicas} an entry counts as published only once replicas have it.
 * Private servers: a primary that persists nothing ({@code appendonly no}, no snapshots), and a
 * replica of it.
 */
class RedisReplicationIT {

  @RegisterExtension final Teardown teardown = new Teardown();

  @Test
  void withoutWaitReplicasAnEntryCountedAsPublishedIsLostWithTheServer() throws Exception {
    // The guarantee of the default, shown as it is: the relay settles on the primary's reply.
    PrivateRedis primary = teardown.add(PrivateRedis.start("--appendonly", "no"));
    String key = "outbox.lost";
    Sink sink = sink(primary.uri(), "");
    assertThat(verdicts(sink, batch(key, 20)))
        .extracting(Verdict::outcome)
        .containsOnly(Outcome.PUBLISHED);

    primary.kill();
    primary.restart();

    RedisTestSupport redis = teardown.add(RedisTestSupport.connect(primary.uri()));
    assertThat(redis.length(key))
        .as("entries after a kill -9 of a server that persists nothing")
        .isZero();
  }

  @Test
  void withWaitReplicasAnEntryCountsAsPublishedOnlyOnceAReplicaHasIt() throws Exception {
    PrivateRedis primary = teardown.add(PrivateRedis.start("--appendonly", "no"));
    String key = "outbox.replicated";
    Sink sink = sink(primary.uri(), "wait-replicas = 1, wait-timeout = 2s, timeout = 10s");

    // No replica yet: written on the primary, but not counted as published (sent again later).
    long started = System.nanoTime();
    List<Verdict> alone = verdicts(sink, batch(key, 5));
    assertThat(alone).extracting(Verdict::outcome).containsOnly(Outcome.SINK_UNAVAILABLE);
    assertThat(alone.get(0).error())
        .contains("stream '" + key + "'")
        .contains("0 of the 1 replicas of wait-replicas had it within wait-timeout (2000 ms)");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));

    PrivateRedis replica =
        teardown.add(
            PrivateRedis.start(
                "--appendonly",
                "no",
                "--replicaof",
                "127.0.0.1",
                Integer.toString(primary.port())));
    RedisTestSupport onPrimary = teardown.add(RedisTestSupport.connect(primary.uri()));
    // Streaming once the replica acknowledged a write: after a diskless full sync the primary
    // streams to a replica only from its first REPLCONF ACK (up to a second after "online").
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              onPrimary.jedis().set("outbox.replication-probe", "1");
              return onPrimary.jedis().waitReplicas(1, 200) == 1;
            });
    List<RoutedEvent> events = batch(key, 50);
    List<Verdict> replicated = verdicts(sink, events);
    assertThat(replicated)
        .as("verdicts (first error: %s)", replicated.get(0).error())
        .extracting(Verdict::outcome)
        .containsOnly(Outcome.PUBLISHED);

    // The primary dies with everything it held; the replica has every entry counted as published.
    primary.kill();
    RedisTestSupport onReplica = teardown.add(RedisTestSupport.connect(replica.uri()));
    Set<String> kept =
        onReplica.read(key, 55, Duration.ofSeconds(5)).stream()
            .map(d -> d.eventId())
            .collect(Collectors.toSet());
    assertThat(kept).containsAll(events.stream().map(e -> e.event().eventId().toString()).toList());
  }

  private static List<RoutedEvent> batch(String key, int n) {
    List<RoutedEvent> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(routed(key, "k" + i % 5, "{\"n\":" + i + "}"));
    }
    return out;
  }

  private Sink sink(String uri, String hocon) {
    return teardown.add(
        new RedisSinkProvider()
            .create(
                SinkContexts.context(RedisSinkProvider.TYPE, "uri = \"" + uri + "\"\n" + hocon)));
  }
}
