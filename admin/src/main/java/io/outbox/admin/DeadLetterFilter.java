package io.outbox.admin;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/**
 * Which dead letters of one pipeline an action of {@link DeadLetterTable} touches: every criterion
 * that is set must hold (a list matches when any of its values does); unset criteria match all.
 *
 * @param pipeline the {@code pipeline} column; always required
 * @param eventIds event ids, or empty for any
 * @param reason {@code max-attempts} or {@code permanent}, or {@code null} for any
 * @param eventTypes event types, or empty for any
 * @param since dead-lettered at or after this instant, or {@code null}
 * @param until dead-lettered before this instant, or {@code null}
 */
public record DeadLetterFilter(
    String pipeline,
    List<UUID> eventIds,
    String reason,
    List<String> eventTypes,
    Instant since,
    Instant until) {

  /** The values the {@code reason} column may hold. */
  public static final Set<String> REASONS = Set.of("max-attempts", "permanent");

  /**
   * Validates the values.
   *
   * @throws IllegalArgumentException naming a bad reason or an empty time range
   */
  public DeadLetterFilter {
    Objects.requireNonNull(pipeline, "pipeline");
    eventIds = eventIds == null ? List.of() : List.copyOf(eventIds);
    eventTypes = eventTypes == null ? List.of() : List.copyOf(eventTypes);
    if (reason != null && !REASONS.contains(reason)) {
      throw new IllegalArgumentException(
          "reason must be max-attempts or permanent, got '" + reason + "'");
    }
    if (since != null && until != null && !since.isBefore(until)) {
      throw new IllegalArgumentException(
          "the time range is empty: since " + since + " is not before until " + until);
    }
  }

  /** Every dead letter of {@code pipeline}. */
  public static DeadLetterFilter all(String pipeline) {
    return new DeadLetterFilter(pipeline, List.of(), null, List.of(), null, null);
  }

  /** Whether only the pipeline is set, so the filter matches every dead letter of it. */
  public boolean matchesAll() {
    return eventIds.isEmpty()
        && reason == null
        && eventTypes.isEmpty()
        && since == null
        && until == null;
  }
}
