package io.outbox.sink.kafka;

import io.outbox.relay.spi.LedgerRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The ledger record's wire form: UTF-8 lines, a version line, the lane, the claim's identity, then
 * one {@code <row id> <event id>} line per published event. Plain text so that an operator can read
 * the ledger with {@code kafka-console-consumer}.
 */
final class LedgerCodec {

  static final String VERSION_LINE = "outbox-relay-ledger 1";

  /**
   * The first line of a distrust marker: the lane's committed records before it on its partition
   * are not to be trusted (a hanging transaction of the lane was aborted that the ledger had
   * decided apart from its events; {@link TransactionalLane}). Kept in the ledger, so that every
   * later read sees it, whichever lane, instance or restart reads.
   */
  static final String DISTRUST_LINE = "outbox-relay-ledger-distrust 1";

  private LedgerCodec() {}

  static byte[] encode(LedgerRecord record) {
    StringBuilder sb = new StringBuilder(64 + record.events().size() * 50);
    sb.append(VERSION_LINE).append('\n');
    sb.append("lane ").append(record.lane()).append('\n');
    sb.append("claim ").append(record.claim().replaceAll("[\\r\\n]+", " ")).append('\n');
    for (LedgerRecord.Event e : record.events()) {
      sb.append(e.id()).append(' ').append(e.eventId()).append('\n');
    }
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** A distrust marker of lane {@code lane} ({@link #DISTRUST_LINE}). */
  static byte[] encodeDistrust(int lane) {
    return (DISTRUST_LINE + "\nlane " + lane + "\n").getBytes(StandardCharsets.UTF_8);
  }

  /** Whether {@code bytes} is a distrust marker rather than a ledger record. */
  static boolean isDistrust(byte[] bytes) {
    return bytes != null
        && new String(bytes, StandardCharsets.UTF_8).startsWith(DISTRUST_LINE + "\n");
  }

  /**
   * @throws IllegalArgumentException when {@code bytes} is not a ledger record of this version
   */
  static LedgerRecord decode(byte[] bytes) {
    if (bytes == null) {
      throw new IllegalArgumentException("a record without a value");
    }
    String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n");
    if (lines.length < 3 || !lines[0].equals(VERSION_LINE)) {
      throw new IllegalArgumentException(
          "not a ledger record of version 1 (first line: '"
              + (lines.length == 0 ? "" : abbreviate(lines[0]))
              + "')");
    }
    int lane = Integer.parseInt(field(lines[1], "lane "));
    String claim = field(lines[2], "claim ");
    List<LedgerRecord.Event> events = new ArrayList<>(lines.length - 3);
    for (int i = 3; i < lines.length; i++) {
      String line = lines[i];
      int space = line.indexOf(' ');
      if (space <= 0) {
        throw new IllegalArgumentException("line " + (i + 1) + " is not '<id> <event id>'");
      }
      events.add(
          new LedgerRecord.Event(
              Long.parseLong(line.substring(0, space)),
              UUID.fromString(line.substring(space + 1))));
    }
    return new LedgerRecord(lane, claim, events);
  }

  private static String field(String line, String prefix) {
    if (!line.startsWith(prefix)) {
      throw new IllegalArgumentException("expected a line '" + prefix + "...'");
    }
    return line.substring(prefix.length());
  }

  private static String abbreviate(String s) {
    return s.length() <= 40 ? s : s.substring(0, 40) + "...";
  }
}
