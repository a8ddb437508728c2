package io.outbox.sink.redis;

import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.support.RelayHeaders;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The commands that add an event as a stream entry: its fields are {@link RelayHeaders#of} (the
 * relay's five and {@code content-type}, then the pipeline's extra headers, then the row's own),
 * except one named {@code payload}, then {@code payload}, the body byte for byte. With a dedup
 * window the entry is added by {@link #SCRIPT}, which skips an event whose marker key exists.
 */
final class StreamEntries {

  /**
   * KEYS[1] = the stream, KEYS[2] = the event's marker; ARGV[1] = the marker's expiry in ms,
   * ARGV[2] = MAXLEN ~ (0: none), ARGV[3..] = the entry's fields and values. Returns the new
   * entry's id, or nil when the marker exists (added before). The marker is set only after XADD
   * succeeded: a failed XADD (WRONGTYPE) leaves no marker that would hide a later re-send.
   */
  static final String SCRIPT =
      """
      if redis.call('EXISTS', KEYS[2]) == 1 then
        redis.call('PEXPIRE', KEYS[2], ARGV[1])
        return false
      end
      local args = {'XADD', KEYS[1]}
      if ARGV[2] ~= '0' then
        args[#args + 1] = 'MAXLEN'; args[#args + 1] = '~'; args[#args + 1] = ARGV[2]
      end
      args[#args + 1] = '*'
      for i = 3, #ARGV do args[#args + 1] = ARGV[i] end
      local id = redis.call(unpack(args))
      redis.call('SET', KEYS[2], id, 'PX', ARGV[1])
      return id
      """;

  /** The SHA-1 of {@link #SCRIPT}, as EVALSHA wants it. */
  static final String SCRIPT_SHA = sha1(SCRIPT);

  private static final byte[] STAR = bytes("*");
  private static final byte[] MAXLEN = bytes("MAXLEN");
  private static final byte[] ABOUT = bytes("~");
  private static final byte[] TWO = bytes("2");

  private final boolean trim;
  private final byte[] maxLen;
  private final boolean dedup;
  private final byte[] windowMillis;
  private final String markerPrefix;

  StreamEntries(RedisSinkSettings settings) {
    this.trim = settings.maxLen() > 0;
    this.maxLen = bytes(Long.toString(settings.maxLen()));
    this.dedup = !settings.dedupWindow().isZero();
    this.windowMillis = bytes(Long.toString(settings.dedupWindow().toMillis()));
    this.markerPrefix = settings.dedupKeyPrefix();
  }

  /** Whether entries are added by the script (a dedup window is set). */
  boolean deduplicates() {
    return dedup;
  }

  /** The arguments of XADD for {@code routed} (after the command's name). */
  List<byte[]> xadd(RoutedEvent routed) {
    List<byte[]> args = new ArrayList<>();
    args.add(bytes(routed.destination()));
    if (trim) {
      args.add(MAXLEN);
      args.add(ABOUT);
      args.add(maxLen);
    }
    args.add(STAR);
    fields(routed, args);
    return args;
  }

  /** The arguments of EVALSHA for {@code routed} (after the command's name). */
  List<byte[]> evalsha(RoutedEvent routed) {
    List<byte[]> args = new ArrayList<>();
    args.add(bytes(SCRIPT_SHA));
    args.add(TWO);
    args.add(bytes(routed.destination()));
    args.add(bytes(markerPrefix + routed.destination() + ":" + routed.event().eventId()));
    args.add(windowMillis);
    args.add(maxLen);
    fields(routed, args);
    return args;
  }

  private static void fields(RoutedEvent routed, List<byte[]> out) {
    Map<String, String> fields = RelayHeaders.of(routed);
    fields.remove("payload"); // reserved for the body: no header takes its name
    for (Map.Entry<String, String> f : fields.entrySet()) {
      out.add(bytes(f.getKey()));
      out.add(bytes(f.getValue()));
    }
    out.add(bytes("payload"));
    out.add(routed.event().payload());
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String sha1(String script) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bytes(script)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JVM has no SHA-1", e);
    }
  }
}
