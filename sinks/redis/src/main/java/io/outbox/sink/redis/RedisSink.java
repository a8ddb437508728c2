package io.outbox.sink.redis;

import static io.outbox.relay.spi.support.BatchPublisher.describe;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Verdict;
import io.outbox.relay.spi.support.BatchPublisher;
import io.outbox.relay.spi.support.PendingBatch;
import io.outbox.relay.spi.support.PublishingSink;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Publishes batches to Redis Streams: a sender thread takes a connection, sends the XADDs (or dedup
 * scripts) of one turn of the batch (a key's next event once the one before was answered: {@link
 * PendingBatch#nextTurn}) in order as one pipeline, and reads one reply per event, which is its
 * verdict ({@link ReplyErrors}). A lost connection, or replies not all in within {@code timeout}
 * ({@link BatchPublisher}), makes every event without a reply sink-unavailable.
 */
final class RedisSink extends PublishingSink {

  private static final Logger log = LoggerFactory.getLogger(RedisSink.class);

  private final StreamEntries entries;
  private final RedisConnections connections;
  private final int waitReplicas;
  private final long waitMillis;
  private final String[] waitArguments;
  private final String pipeline;
  private final String address;
  private final AtomicBoolean durabilitySaid = new AtomicBoolean();

  /** Connects lazily, on the first publish or probe. */
  RedisSink(PluginContext context, RedisSinkSettings settings) {
    super(
        "Redis",
        context,
        settings.timeout(),
        "timeout",
        e -> "stream '" + e.destination() + "' on " + settings.address());
    this.entries = new StreamEntries(settings);
    this.connections = new RedisConnections(context.pipeline(), settings);
    this.pipeline = context.pipeline();
    this.address = settings.address();
    this.waitReplicas = settings.waitReplicas();
    this.waitMillis = settings.waitTimeout().toMillis();
    this.waitArguments = new String[] {Integer.toString(waitReplicas), Long.toString(waitMillis)};
  }

  /** Sends one turn of the batch as one pipeline; each reply is its event's verdict. */
  @Override
  protected void send(PendingBatch batch, List<Integer> turn) throws InterruptedException {
    List<RoutedEvent> events = new ArrayList<>(turn.size());
    for (int i : turn) {
      events.add(batch.events().get(i));
    }
    Jedis jedis = null;
    boolean broken = false;
    try {
      jedis = connections.borrow(batch.deadline()); // connects when none is idle
      if (jedis == null) {
        batch.expire("no free connection within timeout");
        return;
      }
      if (!durabilitySaid.getAndSet(true)) {
        Durability d = Durability.of(jedis, address, waitReplicas);
        if (d.warning()) {
          log.warn("pipeline {}: {}", pipeline, d.text());
        } else {
          log.info("pipeline {}: {}", pipeline, d.text());
        }
      }
      List<Response<Object>> replies = new ArrayList<>(events.size());
      Response<Object> replicated;
      try (Pipeline p = jedis.pipelined()) {
        if (entries.deduplicates()) {
          // Loaded first on this connection, so the EVALSHAs after it find it even if the server
          // restarted (and forgot its scripts) since the last batch.
          p.sendCommand(Command.SCRIPT, "LOAD", StreamEntries.SCRIPT);
        }
        for (RoutedEvent routed : events) {
          replies.add(
              entries.deduplicates()
                  ? p.sendCommand(Command.EVALSHA, entries.evalsha(routed).toArray(byte[][]::new))
                  : p.sendCommand(Command.XADD, entries.xadd(routed).toArray(byte[][]::new)));
        }
        // Every command above writes (a re-send refreshes its marker), so the WAIT covers them;
        // replication keeps one order, so a replica that has them has the first send's entry too.
        replicated = waitReplicas > 0 ? p.sendCommand(Command.WAIT, waitArguments) : null;
        p.sync();
      }
      String notReplicated = notReplicated(replicated);
      for (int n = 0; n < events.size(); n++) {
        try {
          replies.get(n).get(); // an entry id, or nil for an event added before
          batch.complete(
              turn.get(n),
              notReplicated == null
                  ? Verdict.published()
                  : batch.unavailable(turn.get(n), notReplicated));
        } catch (JedisDataException e) {
          batch.complete(turn.get(n), ReplyErrors.classify(e, events.get(n).destination()));
        }
      }
    } catch (JedisException | IllegalStateException e) {
      broken = true;
      batch.expire(describe(e));
    } finally {
      if (jedis != null) {
        connections.giveBack(jedis, broken);
      }
    }
  }

  /**
   * Why the turn's entries do not count as published yet: fewer than {@code wait-replicas} replicas
   * have them ({@code WAIT}'s reply), or {@code WAIT} failed; {@code null} when they do, or when no
   * replica is asked for.
   */
  private String notReplicated(Response<Object> replicated) {
    if (replicated == null) {
      return null;
    }
    try {
      long replicas = (Long) replicated.get();
      return replicas >= waitReplicas
          ? null
          : "written, but "
              + replicas
              + " of the "
              + waitReplicas
              + " replicas of wait-replicas had it within wait-timeout ("
              + waitMillis
              + " ms); sent again";
    } catch (JedisDataException e) {
      return "WAIT for wait-replicas (" + waitReplicas + ") failed: " + describe(e);
    }
  }

  /** A PING on a connection of its own: its connect and reply must come within {@code timeout}. */
  @Override
  protected boolean answers(Duration timeout) {
    try (Jedis jedis = connections.probeConnection(timeout)) {
      return "PONG".equals(jedis.ping());
    }
  }

  @Override
  protected void closeClient(Duration left) {
    connections.close();
  }

  /**
   * {@inheritDoc} Here Redis has no CloudEvents binding: the fields take Kafka's names, {@code
   * ce_id}, ...
   */
  @Override
  public String cloudEventsHeaderPrefix() {
    return "ce_";
  }
}
