package io.outbox.relay.cli;

import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValueFactory;
import io.outbox.admin.DeadLetterFilter;
import io.outbox.admin.DeadLetterTable;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.config.RelaySettings;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * The options of every {@code dead-letters} subcommand that pick the pipeline and its dead letters:
 * {@code --pipeline}, {@code --id}, {@code --reason}, {@code --event-type}, {@code --since}, {@code
 * --until}. Criteria combine with AND; repeated {@code --id} or {@code --event-type} values with
 * OR.
 */
final class DeadLetterSelection {

  @Option(
      names = {"-p", "--pipeline"},
      required = true,
      paramLabel = "P",
      description = "The pipeline (its database, tables and the dead letters it wrote).")
  String pipeline;

  @Option(names = "--id", paramLabel = "EVENT_ID", description = "Only this event id (repeatable).")
  List<String> ids = new ArrayList<>();

  @Option(
      names = "--reason",
      paramLabel = "REASON",
      description = "Only dead letters of this reason: max-attempts | permanent.")
  String reason;

  @Option(
      names = "--event-type",
      paramLabel = "TYPE",
      description = "Only events of this type (repeatable).")
  List<String> eventTypes = new ArrayList<>();

  @Option(
      names = "--since",
      paramLabel = "WHEN",
      description = {
        "Only dead letters dead-lettered at or after WHEN: an ISO-8601 instant",
        "(2026-11-30T08:00:00Z), a date (2026-11-30, UTC) or a duration ago (90m, 2h, 7d),",
        "measured by the database's clock."
      })
  String since;

  @Option(
      names = "--until",
      paramLabel = "WHEN",
      description = "Only dead letters dead-lettered before WHEN (same forms as --since).")
  String until;

  /** Whether any criterion besides the pipeline was given. */
  boolean selective() {
    return !ids.isEmpty()
        || reason != null
        || !eventTypes.isEmpty()
        || since != null
        || until != null;
  }

  /**
   * The configured pipeline named by {@code --pipeline}.
   *
   * @throws ParameterException (exit 2) naming the configured pipelines when there is none such
   */
  PipelineSettings pipeline(CommandSpec spec, RelaySettings settings) {
    PipelineSettings p = settings.pipelines().get(pipeline);
    if (p == null) {
      throw new ParameterException(
          spec.commandLine(),
          "no pipeline '"
              + pipeline
              + "' in the configuration; it has: "
              + String.join(", ", settings.pipelines().keySet()));
    }
    return p;
  }

  /**
   * Checks the values that need no database (event ids, reason), before anything connects.
   *
   * @throws ParameterException (exit 2) naming the bad value
   */
  void validate(CommandSpec spec) {
    eventIds(spec);
    if (reason != null && !DeadLetterFilter.REASONS.contains(reason)) {
      throw new ParameterException(
          spec.commandLine(), "--reason must be max-attempts or permanent, not '" + reason + "'");
    }
    parseTime(spec, "--since", since);
    parseTime(spec, "--until", until);
  }

  /**
   * The filter; relative times ({@code 2h}) count back from the database's clock.
   *
   * @throws ParameterException (exit 2) for a bad value or an empty time range
   */
  DeadLetterFilter filter(CommandSpec spec, Connection c) throws SQLException {
    Instant now = since != null || until != null ? DeadLetterTable.databaseNow(c) : null;
    try {
      return new DeadLetterFilter(
          pipeline,
          eventIds(spec),
          reason,
          eventTypes,
          resolve(parseTime(spec, "--since", since), now),
          resolve(parseTime(spec, "--until", until), now));
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  private List<UUID> eventIds(CommandSpec spec) {
    List<UUID> out = new ArrayList<>();
    for (String id : ids) {
      try {
        out.add(UUID.fromString(id.trim()));
      } catch (IllegalArgumentException e) {
        throw new ParameterException(
            spec.commandLine(), "--id must be an event id (a UUID), not '" + id + "'");
      }
    }
    return out;
  }

  /** An {@link Instant} or a {@link Duration} ago, or null. */
  private static Object parseTime(CommandSpec spec, String option, String text) {
    if (text == null) {
      return null;
    }
    String t = text.trim();
    try {
      return OffsetDateTime.parse(t).toInstant();
    } catch (DateTimeParseException notAnInstant) {
      // next form
    }
    try {
      return LocalDate.parse(t).atStartOfDay(ZoneOffset.UTC).toInstant();
    } catch (DateTimeParseException notADate) {
      // next form
    }
    try {
      Duration ago = ConfigValueFactory.fromAnyRef(t).atKey("ago").getDuration("ago");
      if (!ago.isNegative()) {
        return ago;
      }
    } catch (ConfigException notADuration) {
      // reported below
    }
    throw new ParameterException(
        spec.commandLine(),
        option
            + " must be an ISO-8601 instant (2026-11-30T08:00:00Z), a date (2026-11-30) or a"
            + " duration ago (2h, 7d), not '"
            + text
            + "'");
  }

  private static Instant resolve(Object time, Instant now) {
    if (time instanceof Duration ago) {
      return now.minus(ago);
    }
    return (Instant) time;
  }
}
