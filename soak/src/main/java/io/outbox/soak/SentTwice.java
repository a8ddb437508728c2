package io.outbox.soak;

import io.outbox.sink.kafka.KafkaSinkProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The events the relays listed as sent twice: the exactly-once Kafka sink logs each fall-back to at
 * least once (a batch the broker committed only in part, a distrusted ledger record) with the ids
 * of the events it may deliver twice, after {@link KafkaSinkProvider#SENT_TWICE}.
 */
final class SentTwice {
  private static final Pattern UUID_PATTERN =
      Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

  private SentTwice() {}

  /** Every event id listed after {@link KafkaSinkProvider#SENT_TWICE} in these logs. */
  static Set<UUID> listedIn(List<Path> logs) {
    Set<UUID> out = new HashSet<>();
    for (Path log : logs) {
      try (var lines = Files.lines(log, StandardCharsets.UTF_8)) {
        lines.forEach(line -> out.addAll(listedOn(line)));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + log, e);
      }
    }
    return out;
  }

  /** The event ids one log line lists as sent twice; none for any other line. */
  static Set<UUID> listedOn(String line) {
    int at = line.indexOf(KafkaSinkProvider.SENT_TWICE);
    if (at < 0) {
      return Set.of();
    }
    Set<UUID> out = new HashSet<>();
    Matcher m = UUID_PATTERN.matcher(line);
    m.region(at, line.length());
    while (m.find()) {
      out.add(UUID.fromString(m.group()));
    }
    return out;
  }
}
