package io.outbox.soak;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import picocli.CommandLine;

/**
 * What one soak runs: how long, which source and sink, the seed of every random draw, where its
 * files go.
 *
 * @param duration how long faults are injected while the writers write (the drain comes after)
 * @param source {@code polling} or {@code cdc}
 * @param sink {@code kafka} or {@code rabbitmq}
 * @param exactlyOnce whether the Kafka sink runs {@code delivery = exactly-once}: the two relays
 *     then run different lane counts (4 and 2), the broker is also killed (SIGKILL) as a fault, and
 *     a duplicate is allowed only for an event a relay listed as sent twice
 * @param seed the seed of the fault draws and of each writer's choices
 * @param json whether the report is printed as JSON
 * @param faultInterval how often a fault is drawn (a fault that lasts longer delays the next)
 * @param faultOrder empty to draw the faults at random; else these faults, in this order, each at
 *     the shortest of its range and aimed at the active relay (the short run in the suite, which
 *     injects every kind once), and no more faults after them
 * @param directory where the relays' configurations and logs are written
 * @param partitioned whether the outbox is partitioned ({@code layout = partitioned}, partitions of
 *     {@link #PARTITION_SIZE} ids, so that a soak's events spread over several)
 * @param byPosition whether the relays settle by position ({@code on-publish = position}, polling
 *     source only)
 */
record SoakOptions(
    Duration duration,
    Source source,
    Sink sink,
    boolean exactlyOnce,
    long seed,
    boolean json,
    Duration faultInterval,
    List<FaultKind> faultOrder,
    Path directory,
    boolean partitioned,
    boolean byPosition) {

  /** Ids per partition of a partitioned soak's outbox. */
  static final int PARTITION_SIZE = 10_000;

  static final String USAGE =
      "usage: scripts/soak.sh --minutes N [--source polling|cdc] [--sink kafka|rabbitmq]"
          + " [--exactly-once] [--layout plain|partitioned] [--on-publish mark|position] [--seed S]"
          + " [--json] [--dir DIR]";
  static final Duration FAULT_INTERVAL = Duration.ofSeconds(10);

  /** The relay's source type. */
  enum Source {
    POLLING,
    CDC;

    String type() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** The relay's sink type. */
  enum Sink {
    KAFKA,
    RABBITMQ;

    String type() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  SoakOptions {
    Objects.requireNonNull(duration, "duration");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(sink, "sink");
    Objects.requireNonNull(faultInterval, "faultInterval");
    if (exactlyOnce && sink != Sink.KAFKA) {
      throw new IllegalArgumentException(
          "--exactly-once needs --sink kafka (exactly once is a mode of the Kafka sink)");
    }
    if (byPosition && (source != Source.POLLING || exactlyOnce)) {
      throw new IllegalArgumentException(
          "--on-publish position needs --source polling and at least once");
    }
    faultOrder = List.copyOf(faultOrder);
    Objects.requireNonNull(directory, "directory");
  }

  /**
   * Parses the command line.
   *
   * @throws IllegalArgumentException with a one-line reason when an option is missing or wrong
   */
  static SoakOptions parse(String[] args, Path defaultDirectory) {
    CommandLineArguments a = new CommandLineArguments();
    try {
      new CommandLine(a).setCaseInsensitiveEnumValuesAllowed(true).parseArgs(args);
    } catch (CommandLine.ParameterException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    if (!(a.minutes > 0 && a.minutes <= 24 * 60)) {
      throw new IllegalArgumentException(
          "--minutes must be a number of minutes above 0 and at most 1440: " + a.minutes);
    }
    return new SoakOptions(
        Duration.ofMillis(Math.round(a.minutes * 60_000)),
        a.source,
        a.sink,
        a.exactlyOnce,
        a.seed == null ? System.currentTimeMillis() : a.seed,
        a.json,
        FAULT_INTERVAL,
        List.of(),
        a.directory == null ? defaultDirectory : a.directory,
        a.layout == Layout.PARTITIONED,
        a.onPublish == OnPublish.POSITION);
  }

  /** The outbox's layout. */
  enum Layout {
    PLAIN,
    PARTITIONED
  }

  /** What the relays do with a published row. */
  enum OnPublish {
    MARK,
    POSITION
  }

  /** The options as {@code scripts/soak.sh} takes them ({@link #USAGE}). */
  private static final class CommandLineArguments {
    @CommandLine.Option(names = "--minutes", required = true)
    double minutes;

    @CommandLine.Option(names = "--source")
    Source source = Source.POLLING;

    @CommandLine.Option(names = "--sink")
    Sink sink = Sink.KAFKA;

    @CommandLine.Option(names = "--exactly-once")
    boolean exactlyOnce;

    @CommandLine.Option(names = "--layout")
    Layout layout = Layout.PLAIN;

    @CommandLine.Option(names = "--on-publish")
    OnPublish onPublish = OnPublish.MARK;

    @CommandLine.Option(names = "--seed")
    Long seed;

    @CommandLine.Option(names = "--json")
    boolean json;

    @CommandLine.Option(names = "--dir")
    Path directory;
  }

  /**
   * {@code 10 min, polling -> kafka, seed 42}, or for a fixed order {@code faults sigkill, sigterm
   * (at most 2 min), polling -> kafka, seed 42}.
   */
  String describe() {
    long seconds = duration.toSeconds();
    String length = seconds % 60 == 0 ? seconds / 60 + " min" : seconds + " s";
    if (!faultOrder.isEmpty()) {
      length =
          "faults "
              + String.join(", ", faultOrder.stream().map(FaultKind::label).toList())
              + " (at most "
              + length
              + ")";
    }
    return length
        + ", "
        + source.type()
        + " -> "
        + sink.type()
        + (exactlyOnce ? " (exactly once)" : "")
        + (partitioned ? ", partitioned outbox" : "")
        + (byPosition ? ", settling by position" : "")
        + ", seed "
        + seed;
  }
}
