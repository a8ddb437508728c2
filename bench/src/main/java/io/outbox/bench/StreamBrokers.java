package io.outbox.bench;

import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.DiscardPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.impl.Headers;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * The NATS JetStream and Redis side of a run: the run's bounded stream (JetStream stream or Redis
 * stream key, each kept to about {@link Brokers#QUEUE_MAX_LENGTH} messages so that a backlog does
 * not fill the server), connections, clean-up, and the message shape the relay's NATS and Redis
 * sinks produce, for the raw baselines to copy.
 */
final class StreamBrokers {
  private StreamBrokers() {}

  /** The JetStream stream of the run: the prefix without its dot (stream names take none). */
  static String natsStream(Brokers brokers) {
    return brokers.prefix().replace(".", "");
  }

  /** A file-stored stream binding the run's subject, oldest messages discarded past the cap. */
  @SuppressWarnings("try") // Connection.close() may throw InterruptedException: fine here
  static void createStream(Brokers brokers) throws Exception {
    try (Connection c = nats(brokers, "bench-setup")) {
      c.jetStreamManagement()
          .addStream(
              StreamConfiguration.builder()
                  .name(natsStream(brokers))
                  .subjects(brokers.destination())
                  .storageType(StorageType.File)
                  .maxMessages(Brokers.QUEUE_MAX_LENGTH)
                  .discardPolicy(DiscardPolicy.Old)
                  .build());
    }
  }

  @SuppressWarnings("try") // Connection.close() may throw InterruptedException: fine here
  static void deleteStream(Brokers brokers) {
    try (Connection c = nats(brokers, "bench-cleanup")) {
      JetStreamManagement jsm = c.jetStreamManagement();
      jsm.deleteStream(natsStream(brokers));
    } catch (Exception e) {
      // Best effort: the name is unique to the run.
    }
  }

  static Connection nats(Brokers brokers, String name) throws Exception {
    return Nats.connect(
        Options.builder()
            .server(brokers.natsUrl())
            .connectionName(name)
            .connectionTimeout(Duration.ofSeconds(10))
            .build());
  }

  /** The headers the relay's NATS sink sends (its {@code Nats-Msg-Id} is a publish option). */
  static Headers natsHeaders(String eventId, String key, Instant at) {
    Headers h = new Headers();
    Brokers.relayHeaders(eventId, key, at).forEach(h::put);
    h.put("content-type", "application/json");
    return h;
  }

  static Jedis redis(Brokers brokers) {
    URI u = URI.create(brokers.redisUri());
    return new Jedis(
        new HostAndPort(u.getHost(), u.getPort() == -1 ? 6379 : u.getPort()),
        DefaultJedisClientConfig.builder().timeoutMillis(60_000).build());
  }

  /**
   * The arguments of the XADD the relay's Redis sink sends for an event with the bench's {@code
   * sink.redis.max-len}: the stream, {@code MAXLEN ~ cap *}, its fields and the payload.
   */
  static byte[][] xadd(Brokers brokers, String eventId, String key, Instant at, byte[] payload) {
    List<String> words =
        new ArrayList<>(
            List.of(
                brokers.destination(),
                "MAXLEN",
                "~",
                Integer.toString(Brokers.QUEUE_MAX_LENGTH),
                "*"));
    Brokers.relayHeaders(eventId, key, at)
        .forEach(
            (name, value) -> {
              words.add(name);
              words.add(value);
            });
    words.addAll(List.of("content-type", "application/json", "payload"));
    List<byte[]> args = new ArrayList<>(words.size() + 1);
    for (String w : words) {
      args.add(w.getBytes(StandardCharsets.UTF_8));
    }
    args.add(payload);
    return args.toArray(byte[][]::new);
  }

  /**
   * Deletes the run's stream key and the relay's dedup markers of it ({@code
   * outbox-relay:added:<stream>:*}, one per event for the sink's dedup window).
   */
  static void deleteRedisKeys(Brokers brokers) {
    try (Jedis jedis = redis(brokers)) {
      jedis.unlink(brokers.destination());
      ScanParams match = new ScanParams().match(markerPattern(brokers)).count(10_000);
      String cursor = ScanParams.SCAN_POINTER_START;
      do {
        ScanResult<String> page = jedis.scan(cursor, match);
        if (!page.getResult().isEmpty()) {
          jedis.unlink(page.getResult().toArray(String[]::new));
        }
        cursor = page.getCursor();
      } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
    } catch (RuntimeException e) {
      // Best effort: the markers expire with the sink's dedup window anyway.
    }
  }

  private static String markerPattern(Brokers brokers) {
    // The run's prefix holds no glob characters (bench-<8 hex>.).
    return "outbox-relay:added:" + brokers.destination() + ":*";
  }
}
