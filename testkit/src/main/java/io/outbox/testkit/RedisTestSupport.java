package io.outbox.testkit;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * A test's own connection to a Redis server: reads back what the Redis sink added to a stream, in
 * stream order, as {@link Delivered} messages, and deletes the keys the test used.
 */
public final class RedisTestSupport implements AutoCloseable {

  private final String uri;
  private final List<String> keys = new ArrayList<>();
  private Jedis jedis;

  private RedisTestSupport(String uri) {
    this.uri = uri;
  }

  /** Connects (lazily) to the server at {@code uri}, {@code redis://host:port}. */
  public static RedisTestSupport connect(String uri) {
    return new RedisTestSupport(uri);
  }

  /** A key no other test uses, {@code prefix.<random>}; deleted by close. */
  public String newKey(String prefix) {
    String key = prefix + "." + UUID.randomUUID().toString().substring(0, 12);
    keys.add(key);
    return key;
  }

  /** The connection, opened again when a server restart broke it. */
  public synchronized Jedis jedis() {
    if (jedis == null || jedis.isBroken() || !jedis.isConnected()) {
      if (jedis != null) {
        jedis.close();
      }
      URI u = URI.create(uri);
      jedis =
          new Jedis(
              new HostAndPort(u.getHost(), u.getPort() == -1 ? 6379 : u.getPort()),
              DefaultJedisClientConfig.builder().timeoutMillis(10_000).build());
    }
    return jedis;
  }

  /**
   * Every entry of stream {@code key}, in stream order, once it holds at least {@code expected} or
   * {@code timeout} passed.
   */
  public List<Delivered> read(String key, int expected, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (length(key) < expected && System.nanoTime() - deadline < 0) {
      Thread.sleep(50);
    }
    List<Delivered> out = new ArrayList<>();
    byte[] from = bytes("-");
    while (true) {
      // Each entry is [id, [field, value, field, value...]], all binary.
      List<Object> page = jedis().xrange(bytes(key), from, bytes("+"), 10_000);
      for (Object e : page) {
        out.add(delivered((List<?>) ((List<?>) e).get(1)));
      }
      if (page.size() < 10_000) {
        return out;
      }
      byte[] lastId = (byte[]) ((List<?>) page.get(page.size() - 1)).get(0);
      from = bytes("(" + new String(lastId, StandardCharsets.UTF_8));
    }
  }

  /** How many entries stream {@code key} holds (0 when it does not exist). */
  public long length(String key) {
    return "stream".equals(jedis().type(key)) ? jedis().xlen(key) : 0;
  }

  /**
   * An entry as the sink's contract sees it: the body from {@code payload}, the content type from
   * {@code content-type}, every other field a header.
   */
  static Delivered delivered(List<?> fields) {
    Map<String, String> headers = new LinkedHashMap<>();
    byte[] body = null;
    String contentType = null;
    for (int i = 0; i + 1 < fields.size(); i += 2) {
      String name = new String((byte[]) fields.get(i), StandardCharsets.UTF_8);
      byte[] value = (byte[]) fields.get(i + 1);
      switch (name) {
        case "payload" -> body = value;
        case "content-type" -> contentType = new String(value, StandardCharsets.UTF_8);
        default -> headers.put(name, new String(value, StandardCharsets.UTF_8));
      }
    }
    return new Delivered(
        headers.get("event-id"),
        null,
        headers.get("event-type"),
        headers,
        body == null ? new byte[0] : body,
        contentType);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Deletes the keys this support handed out, then disconnects. */
  @Override
  public synchronized void close() {
    try {
      if (!keys.isEmpty()) {
        jedis().del(keys.toArray(String[]::new));
      }
    } catch (RuntimeException e) {
      // the server is gone: nothing to delete
    } finally {
      if (jedis != null) {
        jedis.close();
      }
    }
  }
}
