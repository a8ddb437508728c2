package io.outbox.sink.redis;

import io.outbox.relay.spi.Verdict;
import java.util.List;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Turns Redis's error reply for one event into its verdict (docs/design.md, "Failure classes"), by
 * the reply's error code (its first word; within a script's error too): the key can never take the
 * entry → permanent; the server cannot take writes now → sink-unavailable; anything else →
 * retryable, so that a repeating error ends as a dead letter.
 */
final class ReplyErrors {

  /** The key holds another type than a stream; the ACL forbids the key. */
  private static final List<String> PERMANENT = List.of("WRONGTYPE", "NOPERM");

  /** Out of memory, starting up, a long script, a replica, no master, not authenticated. */
  private static final List<String> UNAVAILABLE =
      List.of(
          "OOM", "LOADING", "BUSY", "READONLY", "MASTERDOWN", "NOAUTH", "WRONGPASS", "NOSCRIPT");

  private ReplyErrors() {}

  static Verdict classify(JedisDataException e, String stream) {
    String message = String.valueOf(e.getMessage());
    String where = "stream '" + stream + "': ";
    for (String code : PERMANENT) {
      if (message.startsWith(code) || message.contains(" " + code + " ")) {
        return Verdict.permanent(where + message);
      }
    }
    for (String code : UNAVAILABLE) {
      if (message.startsWith(code)) {
        return Verdict.unavailable(where + "Redis cannot take writes now: " + message);
      }
    }
    return Verdict.retryable(where + message);
  }
}
