package io.outbox.bench;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The events every run and every baseline uses: event {@code i} has key {@code key-(i mod keys)},
 * aggregate type {@code bench}, event type {@code BenchEvent} and a JSON payload of exactly {@code
 * payloadBytes} bytes, written in the form PostgreSQL's {@code jsonb} prints it, so that the bytes
 * on the wire are the same whether they come from memory, the relay or Debezium.
 *
 * @param events backlog size
 * @param keys distinct aggregate ids
 * @param payloadBytes payload size in bytes (at least {@link #MIN_PAYLOAD_BYTES})
 */
record Workload(int events, int keys, int payloadBytes) {

  /** The smallest payload the JSON frame of {@link #payload} fits in. */
  static final int MIN_PAYLOAD_BYTES = 32;

  static final String AGGREGATE_TYPE = "bench";
  static final String EVENT_TYPE = "BenchEvent";

  Workload {
    if (events < 1 || keys < 1 || payloadBytes < MIN_PAYLOAD_BYTES) {
      throw new IllegalArgumentException(
          "events and keys must be >= 1 and payload bytes >= "
              + MIN_PAYLOAD_BYTES
              + ", got "
              + events
              + ", "
              + keys
              + ", "
              + payloadBytes);
    }
  }

  /** The aggregate id of event {@code i}. */
  String key(long i) {
    return "key-" + (i % keys);
  }

  /**
   * The payload of event {@code i}: {@code {"n": i, "pad": "xxx…"}} padded to {@link
   * #payloadBytes}. jsonb orders keys by length and prints ": " and ", ", so this text survives a
   * round trip through a jsonb column unchanged.
   */
  String payload(long i) {
    String head = "{\"n\": " + i + ", \"pad\": \"";
    String tail = "\"}";
    int pad = payloadBytes - head.length() - tail.length();
    char[] fill = new char[Math.max(0, pad)];
    Arrays.fill(fill, 'x');
    return head + new String(fill) + tail;
  }

  /** {@link #payload} as UTF-8 bytes. */
  byte[] payloadBytes(long i) {
    return payload(i).getBytes(StandardCharsets.UTF_8);
  }
}
