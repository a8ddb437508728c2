package io.outbox.bench;

import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.StreamEntryID;
import redis.clients.jedis.params.XReadParams;
import redis.clients.jedis.resps.StreamEntry;

/** The latency run's consumers of a JetStream stream and of a Redis stream. */
final class StreamReceivers {
  private StreamReceivers() {}

  /** An ordered push consumer of the run's stream, delivering messages stored from now on. */
  static final class Nats extends Receiver {
    private final Connection connection;

    Nats(Brokers brokers) throws Exception {
      connection = StreamBrokers.nats(brokers, "bench-receiver");
      Dispatcher dispatcher = connection.createDispatcher();
      connection
          .jetStream()
          .subscribe(
              brokers.destination(),
              dispatcher,
              m -> seen(m.getHeaders().getFirst("event-id"), System.nanoTime()),
              false,
              PushSubscribeOptions.builder()
                  .ordered(true)
                  .configuration(
                      ConsumerConfiguration.builder().deliverPolicy(DeliverPolicy.New).build())
                  .build());
    }

    @Override
    public void close() {
      try {
        connection.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** A thread reading the run's stream with blocking XREADs, after the entry last added now. */
  static final class Redis extends Receiver.Looping {
    private final Jedis jedis;
    private final String key;
    private final XReadParams params = XReadParams.xReadParams().block(100).count(1000);
    private StreamEntryID from;

    Redis(Brokers brokers) {
      jedis = StreamBrokers.redis(brokers);
      key = brokers.destination();
      // Taken now, before any event of the run is written: "$" on each XREAD would skip what
      // arrives between two of them.
      List<StreamEntry> last = jedis.xrevrange(key, "+", "-", 1);
      from = last.isEmpty() ? new StreamEntryID() : last.get(0).getID();
      start("bench-redis-receiver");
    }

    @Override
    void readOnce() {
      List<Map.Entry<String, List<StreamEntry>>> read = jedis.xread(params, Map.of(key, from));
      if (read == null) {
        return;
      }
      long now = System.nanoTime();
      for (Map.Entry<String, List<StreamEntry>> stream : read) {
        for (StreamEntry e : stream.getValue()) {
          from = e.getID();
          seen(e.getFields().get("event-id"), now);
        }
      }
    }

    @Override
    void stop() {
      jedis.close();
    }
  }
}
