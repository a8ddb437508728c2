package io.outbox.bench;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.Response;

/**
 * The {@code raw} Redis baseline: Jedis sending the workload's entries (built in memory beforehand,
 * the fields the relay's sink writes, {@code MAXLEN ~} as the bench's relay is told) as plain
 * {@code XADD}s, one pipeline per batch of {@code batchSize}, on as many connections as the relay
 * has lanes, until every reply is in. The relay's default also de-duplicates re-sends with a script
 * per entry (its {@code dedup-window}); this baseline does not (see docs/performance.md).
 */
final class RawRedis {
  private RawRedis() {}

  static Results.Throughput run(Brokers brokers, Workload workload, int connections, int batchSize)
      throws Exception {
    Instant now = Instant.now();
    List<byte[][]> commands = new ArrayList<>(workload.events());
    for (int i = 0; i < workload.events(); i++) {
      commands.add(
          StreamBrokers.xadd(
              brokers,
              UUID.randomUUID().toString(),
              workload.key(i),
              now,
              workload.payloadBytes(i)));
    }
    AtomicLong added = new AtomicLong();
    long start = System.nanoTime();
    // Connection c sends batches c, c + connections, ...: each pipeline waits for its replies.
    Parallel.run(
        "bench-raw-redis",
        connections,
        c -> {
          try (Jedis jedis = StreamBrokers.redis(brokers)) {
            for (int from = c * batchSize;
                from < commands.size();
                from += connections * batchSize) {
              List<Response<Object>> replies = new ArrayList<>(batchSize);
              try (Pipeline p = jedis.pipelined()) {
                for (byte[][] xadd :
                    commands.subList(from, Math.min(from + batchSize, commands.size()))) {
                  replies.add(p.sendCommand(Command.XADD, xadd));
                }
                p.sync();
              }
              for (Response<Object> r : replies) {
                r.get(); // throws on an error reply
              }
              added.addAndGet(replies.size());
            }
          }
        });
    long nanos = System.nanoTime() - start;
    return Results.Throughput.of(
        "raw redis",
        "Jedis pipelined XADD (MAXLEN ~ "
            + Brokers.QUEUE_MAX_LENGTH
            + ", the relay's fields), one pipeline per "
            + batchSize
            + " entries on "
            + connections
            + " connections, first send to last reply; no dedup script",
        added.get(),
        nanos);
  }
}
