package io.outbox.relay.demo;

import java.net.URI;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.resps.StreamEntry;

/** Reads the demo's Redis stream in entry order, page by page; deletes it on close. */
final class RedisDemoConsumer extends DemoConsumer {
  private final Jedis jedis;
  private final String key;
  private String after = "-";

  private RedisDemoConsumer(Jedis jedis, String key) {
    this.jedis = jedis;
    this.key = key;
  }

  static RedisDemoConsumer start(String uri, String key) {
    RedisDemoConsumer consumer = new RedisDemoConsumer(new Jedis(URI.create(uri), 5000), key);
    consumer.startReading("outbox-relay-demo-redis-consumer", consumer::readPage);
    return consumer;
  }

  /** Reads the entries after the last one read; {@code false} when there is none yet. */
  private boolean readPage() {
    List<StreamEntry> page = jedis.xrange(key, after, "+", 1000);
    for (StreamEntry e : page) {
      Map<String, String> f = e.getFields();
      received(f.get("event-id"), f.get("aggregate-id"), f.get("event-type"));
      after = "(" + e.getID(); // exclusive: the entries after this one
    }
    return !page.isEmpty();
  }

  @Override
  public void close() {
    try {
      stopReading();
      jedis.del(key);
      jedis.close();
    } catch (Exception e) {
      // Closing the demo's own consumer: nothing to recover.
    }
  }
}
