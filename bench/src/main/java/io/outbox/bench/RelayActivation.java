package io.outbox.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * When the relay under test became active, read from its log: the timestamp of the line its
 * pipeline logs once its source activated and its lanes start ({@code pipeline bench: active, ...},
 * both sources). The latency run reports how long after it its measured window began, so that a run
 * with {@code --warm-up 0} and a small backlog says which seconds after an activation it measured.
 */
final class RelayActivation {

  private static final Pattern ACTIVE =
      Pattern.compile(
          "(?m)^(\\S+) INFO .* pipeline "
              + Pattern.quote(RelayUnderTest.PIPELINE)
              + ": active, \\d+ lane");

  private RelayActivation() {}

  /** The latest activation the log shows, or {@code null} when it shows none. */
  static Instant lastIn(Path relayLog) throws IOException {
    return lastIn(Files.readString(relayLog));
  }

  static Instant lastIn(String log) {
    Matcher m = ACTIVE.matcher(log);
    Instant last = null;
    while (m.find()) {
      try {
        last = Instant.parse(m.group(1));
      } catch (DateTimeParseException e) {
        // Not the relay's own log format: no time to report.
      }
    }
    return last;
  }
}
