package io.outbox.testkit;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PurgeOptions;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.impl.Headers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A test's own connection to a NATS server with JetStream: makes and deletes streams, and reads
 * back what the NATS sink stored, in stream order, as {@link Delivered} messages.
 */
public final class NatsTestSupport implements AutoCloseable {

  private static final String ENCODED_PREFIX = "=?UTF-8?B?";
  private static final String ENCODED_SUFFIX = "?=";

  private final Connection connection;
  private final JetStreamManagement jsm;
  private final List<String> streams = new ArrayList<>();

  private NatsTestSupport(Connection connection) throws IOException {
    this.connection = connection;
    this.jsm = connection.jetStreamManagement();
  }

  /** Connects to the server at {@code url}. */
  public static NatsTestSupport connect(String url) throws IOException, InterruptedException {
    return new NatsTestSupport(
        Nats.connect(
            Options.builder()
                .server(url)
                .connectionTimeout(Duration.ofSeconds(5))
                .maxReconnects(-1)
                .build()));
  }

  /** A name no other test uses, e.g. {@code prefix_1b2c3d4e}; letters, digits and _ only. */
  public static String unique(String prefix) {
    return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  /** Creates a file-stored stream {@code name} binding {@code subjects}; deleted by close. */
  public void createStream(String name, String... subjects)
      throws IOException, JetStreamApiException {
    jsm.addStream(
        StreamConfiguration.builder()
            .name(name)
            .subjects(subjects)
            .storageType(StorageType.File)
            .build());
    streams.add(name);
  }

  /** Creates the stream {@code config} describes; deleted by close. */
  public void createStream(StreamConfiguration config) throws IOException, JetStreamApiException {
    jsm.addStream(config);
    streams.add(config.getName());
  }

  /** Deletes stream {@code name} and forgets it. */
  public void deleteStream(String name) throws IOException, JetStreamApiException {
    jsm.deleteStream(name);
    streams.remove(name);
  }

  /** Removes all but the newest {@code keep} messages of stream {@code name}. */
  public void purge(String name, long keep) throws IOException, JetStreamApiException {
    jsm.purgeStream(name, PurgeOptions.builder().keep(keep).build());
  }

  /** How many messages stream {@code name} holds. */
  public long count(String name) throws IOException, JetStreamApiException {
    return jsm.getStreamInfo(name).getStreamState().getMsgCount();
  }

  /**
   * Every message of stream {@code name}, in stream order, once it holds at least {@code expected}
   * or {@code timeout} passed.
   */
  public List<Delivered> read(String name, int expected, Duration timeout)
      throws IOException, JetStreamApiException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (count(name) < expected && System.nanoTime() - deadline < 0) {
      Thread.sleep(50);
    }
    var state = jsm.getStreamInfo(name).getStreamState();
    List<Delivered> out = new ArrayList<>();
    for (long seq = state.getFirstSequence(); seq <= state.getLastSequence(); seq++) {
      out.add(delivered(jsm.getMessage(name, seq)));
    }
    return out;
  }

  /**
   * A stored message as the sink's contract sees it: the event id from {@code Nats-Msg-Id}, the
   * content type from {@code content-type}, every other header decoded.
   */
  static Delivered delivered(MessageInfo m) {
    Map<String, String> headers = new LinkedHashMap<>();
    Headers h = m.getHeaders();
    String messageId = null;
    String contentType = null;
    if (h != null) {
      for (String key : h.keySet()) {
        String value = decode(h.getFirst(key));
        switch (key) {
          case "Nats-Msg-Id" -> messageId = value;
          case "content-type" -> contentType = value;
          default -> headers.put(key, value);
        }
      }
    }
    byte[] body = m.getData() == null ? new byte[0] : m.getData();
    return new Delivered(messageId, null, headers.get("event-type"), headers, body, contentType);
  }

  /** A header value as the sink wrote it: an RFC 2047 encoded word is decoded. */
  public static String decode(String value) {
    if (value != null && value.startsWith(ENCODED_PREFIX) && value.endsWith(ENCODED_SUFFIX)) {
      return new String(
          Base64.getDecoder()
              .decode(
                  value.substring(
                      ENCODED_PREFIX.length(), value.length() - ENCODED_SUFFIX.length())),
          StandardCharsets.UTF_8);
    }
    return value;
  }

  /** Deletes the streams this support made, then disconnects. */
  @Override
  public void close() {
    for (String name : List.copyOf(streams)) {
      try {
        deleteStream(name);
      } catch (IOException | JetStreamApiException e) {
        // gone with its server, or never made
      }
    }
    try {
      connection.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
