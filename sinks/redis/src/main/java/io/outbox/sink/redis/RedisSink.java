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

  private final StreamEntries entries;
  private final RedisConnections connections;

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
      jedis = connections.borrow(batch.deadlineNanos()); // connects when none is idle
      if (jedis == null) {
        batch.expire("no free connection within timeout");
        return;
      }
      List<Response<Object>> replies = new ArrayList<>(events.size());
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
        p.sync();
      }
      for (int n = 0; n < events.size(); n++) {
        try {
          replies.get(n).get(); // an entry id, or nil for an event added before
          batch.complete(turn.get(n), Verdict.published());
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
}
