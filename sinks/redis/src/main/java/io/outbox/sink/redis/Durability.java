package io.outbox.sink.redis;

import java.util.List;
import java.util.Map;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;

/**
 * What an entry the relay counts as published survives on the server it writes to, said once per
 * sink at its first connection (docs/sinks/redis.md, "What a write survives"): from the server's
 * {@code appendonly} and {@code appendfsync}, its connected replicas and {@code wait-replicas}.
 *
 * @param text the sentence to log
 * @param warning whether it is a warning: {@code wait-replicas} asks for more replicas than are
 *     connected, so every batch will wait {@code wait-timeout} and be sink-unavailable
 */
record Durability(String text, boolean warning) {

  /** Reads the server's settings on {@code jedis}; says so when it cannot (CONFIG refused). */
  static Durability of(Jedis jedis, String address, int waitReplicas) {
    String appendonly;
    String appendfsync;
    try {
      appendonly = value(jedis.configGet("appendonly"), "appendonly");
      appendfsync = value(jedis.configGet("appendfsync"), "appendfsync");
    } catch (JedisException e) {
      appendonly = null;
      appendfsync = null;
    }
    int replicas;
    try {
      replicas = connectedReplicas(jedis.info("replication"));
    } catch (JedisException e) {
      replicas = -1;
    }
    return describe(address, appendonly, appendfsync, replicas, waitReplicas);
  }

  /**
   * @param appendonly the server's {@code appendonly}, or {@code null} when it could not be read
   * @param appendfsync the server's {@code appendfsync}, or {@code null}
   * @param replicas connected replicas, or -1 when unknown
   */
  static Durability describe(
      String address, String appendonly, String appendfsync, int replicas, int waitReplicas) {
    StringBuilder s = new StringBuilder("Redis at ").append(address).append(": ");
    if (appendonly == null) {
      s.append("its persistence settings cannot be read (CONFIG GET refused; a managed server?)");
    } else if (!"yes".equals(appendonly)) {
      s.append(
          "appendonly no: an acknowledged entry survives a restart only if a snapshot (save) was"
              + " taken after it; a kill or crash of Redis loses what came after the last one");
    } else if ("always".equals(appendfsync)) {
      s.append(
          "appendonly yes, appendfsync always: an acknowledged entry survives a crash of Redis and"
              + " of its host");
    } else if ("everysec".equals(appendfsync)) {
      s.append(
          "appendonly yes, appendfsync everysec: an acknowledged entry survives a crash of Redis;"
              + " a crash of its host can lose about the last second of them");
    } else {
      s.append("appendonly yes, appendfsync ")
          .append(appendfsync)
          .append(
              ": an acknowledged entry survives a crash of Redis; a crash of its host can lose"
                  + " what the kernel had not written yet (up to about 30 s)");
    }
    s.append("; ").append(replicas < 0 ? "replicas unknown" : replicas + " connected replica(s)");
    if (waitReplicas == 0) {
      s.append(
          "; wait-replicas = 0: an entry counts as published on this server's reply, and a"
              + " failover to a replica that had not received it loses it");
      return new Durability(s.toString(), false);
    }
    s.append("; wait-replicas = ")
        .append(waitReplicas)
        .append(
            ": an entry counts as published once that many replicas have it, so it also survives"
                + " a failover to one of them");
    boolean tooFew = replicas >= 0 && replicas < waitReplicas;
    if (tooFew) {
      s.append(
          ". Fewer replicas are connected than wait-replicas asks for: every batch waits"
              + " wait-timeout and is sink-unavailable until enough are");
    }
    return new Durability(s.toString(), tooFew);
  }

  private static String value(Map<String, String> config, String key) {
    String v = config.get(key);
    if (v == null) {
      throw new JedisException("no " + key + " in CONFIG GET's reply");
    }
    return v;
  }

  /** {@code connected_slaves} of {@code INFO replication}. */
  static int connectedReplicas(String info) {
    for (String line : List.of(info.split("\r?\n"))) {
      if (line.startsWith("connected_slaves:")) {
        return Integer.parseInt(line.substring("connected_slaves:".length()).trim());
      }
    }
    return -1;
  }
}
