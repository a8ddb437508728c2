package io.outbox.sink.redis;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.SinkHealthLog;
import io.outbox.relay.spi.Verdict;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Publishes batches to Redis Streams: a sender thread takes a connection, sends the batch's XADDs
 * (or dedup scripts) in order as one pipeline, and reads one reply per event, which is its verdict
 * ({@link ReplyErrors}). A lost connection or a reply later than {@code timeout} makes every event
 * without a reply sink-unavailable.
 */
final class RedisSink implements Sink {

  private static final Logger log = LoggerFactory.getLogger(RedisSink.class);

  private final String pipeline;
  private final RedisSinkSettings settings;
  private final StreamEntries entries;
  private final RedisConnections connections;
  private final ExecutorService senders;
  private final Map<CompletableFuture<List<Verdict>>, List<RoutedEvent>> inFlight =
      new ConcurrentHashMap<>();
  private final SinkHealthLog health;
  private volatile boolean closed;

  RedisSink(String pipeline, RedisSinkSettings settings, RedisConnections connections) {
    this.pipeline = pipeline;
    this.settings = settings;
    this.entries = new StreamEntries(settings);
    this.connections = connections;
    this.health = new SinkHealthLog(log, "Redis", pipeline);
    AtomicInteger n = new AtomicInteger();
    this.senders =
        Executors.newCachedThreadPool(
            r -> {
              Thread t =
                  new Thread(r, "outbox-relay-redis-" + pipeline + "-send-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  @Override
  public CompletionStage<List<Verdict>> publish(List<RoutedEvent> batch) {
    if (batch.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    List<RoutedEvent> events = List.copyOf(batch);
    CompletableFuture<List<Verdict>> result = new CompletableFuture<>();
    if (closed) {
      result.complete(all(events, "the Redis sink is closed"));
      return result;
    }
    inFlight.put(result, events);
    try {
      // On a sender thread: the lane writes the previous batch's settlement meanwhile.
      senders.execute(() -> finish(result, events, send(events)));
    } catch (RejectedExecutionException e) {
      finish(result, events, all(events, "the Redis sink is closed"));
    }
    return result;
  }

  private void finish(
      CompletableFuture<List<Verdict>> result, List<RoutedEvent> events, List<Verdict> verdicts) {
    inFlight.remove(result);
    if (result.complete(verdicts)) {
      health.batch(events, verdicts);
    }
  }

  /** Sends the batch as one pipeline; one verdict per event, in batch order. */
  private List<Verdict> send(List<RoutedEvent> events) {
    Verdict[] verdicts = new Verdict[events.size()];
    long deadline = System.nanoTime() + settings.timeout().toNanos();
    Jedis jedis = null;
    boolean broken = false;
    try {
      jedis = connections.borrow(deadline);
      if (jedis == null) {
        return all(
            events, "no free connection within timeout (" + settings.timeout().toMillis() + " ms)");
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
      for (int i = 0; i < events.size(); i++) {
        try {
          replies.get(i).get(); // an entry id, or nil for an event added before
          verdicts[i] = Verdict.published();
        } catch (JedisDataException e) {
          verdicts[i] = ReplyErrors.classify(e, events.get(i).destination());
        }
      }
      return List.of(verdicts);
    } catch (JedisException | IllegalStateException e) {
      broken = true;
      return fill(verdicts, events, describe(e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      broken = true;
      return fill(verdicts, events, "interrupted while publishing to Redis");
    } finally {
      if (jedis != null) {
        connections.giveBack(jedis, broken);
      }
    }
  }

  /** {@code verdicts} with every missing one sink-unavailable for {@code reason}. */
  private List<Verdict> fill(Verdict[] verdicts, List<RoutedEvent> events, String reason) {
    for (int i = 0; i < verdicts.length; i++) {
      if (verdicts[i] == null) {
        verdicts[i] = unavailable(events.get(i), reason);
      }
    }
    return List.of(verdicts);
  }

  private List<Verdict> all(List<RoutedEvent> events, String reason) {
    return fill(new Verdict[events.size()], events, reason);
  }

  private Verdict unavailable(RoutedEvent routed, String reason) {
    return Verdict.unavailable(
        "stream '" + routed.destination() + "' on " + settings.address() + ": " + reason);
  }

  /** A PING on a connection of its own whose connect and reply must come within {@code timeout}. */
  @Override
  public boolean probe(Duration timeout) {
    if (closed) {
      return false;
    }
    try (Jedis jedis = connections.probeConnection(timeout)) {
      boolean ok = "PONG".equals(jedis.ping());
      if (ok) {
        health.probeAnswered();
      }
      return ok;
    } catch (JedisException e) {
      log.debug("Redis probe for pipeline {} failed: {}", pipeline, describe(e));
      return false;
    }
  }

  @Override
  public void close(Duration timeout) {
    log.info("Closing the Redis sink of pipeline {} (timeout {} ms)", pipeline, timeout.toMillis());
    closed = true;
    try {
      CompletableFuture.allOf(inFlight.keySet().toArray(CompletableFuture[]::new))
          .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // what is left is answered below
    }
    for (Map.Entry<CompletableFuture<List<Verdict>>, List<RoutedEvent>> batch :
        Collections.unmodifiableMap(inFlight).entrySet()) {
      finish(
          batch.getKey(),
          batch.getValue(),
          all(batch.getValue(), "the Redis sink was closed before Redis answered"));
    }
    connections.close();
    senders.shutdownNow();
  }

  /** Class and message of a client failure (and its cause's); never payload data. */
  static String describe(Throwable e) {
    String text = e.getClass().getSimpleName() + ": " + e.getMessage();
    return e.getCause() == null ? text : text + " (" + e.getCause().getMessage() + ")";
  }
}
