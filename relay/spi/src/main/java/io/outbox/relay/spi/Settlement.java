package io.outbox.relay.spi;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** The pipeline's decision about one claimed event, made durable by {@link Claim#settle}. */
public sealed interface Settlement {

  OutboxEvent event();

  /**
   * Checks that every settlement is for one of {@code events}, at most one per event (a claim's own
   * check before it records anything).
   *
   * @throws IllegalArgumentException naming the first settlement that is not
   */
  static void requireOnePerEvent(List<OutboxEvent> events, List<Settlement> settlements) {
    Set<Long> ids = new HashSet<>();
    for (OutboxEvent e : events) {
      ids.add(e.id());
    }
    Set<Long> seen = new HashSet<>();
    for (Settlement s : settlements) {
      if (!ids.contains(s.event().id())) {
        throw new IllegalArgumentException(
            "settlement for " + s.event() + " which is not part of this claim; claim released");
      }
      if (!seen.add(s.event().id())) {
        throw new IllegalArgumentException("two settlements for " + s.event() + "; claim released");
      }
    }
  }

  /** The broker acknowledged it: mark or delete the row. */
  record Published(OutboxEvent event) implements Settlement {
    public Published {
      Objects.requireNonNull(event, "event");
    }
  }

  /**
   * A retryable failure: record {@code attempts} (the new total), {@code last_error} and {@code
   * next_attempt_at = now + delay}.
   */
  record Retry(OutboxEvent event, int attempts, Duration delay, String error)
      implements Settlement {
    public Retry {
      Objects.requireNonNull(event, "event");
      Objects.requireNonNull(delay, "delay");
      Objects.requireNonNull(error, "error");
    }
  }

  /** Move the row to the dead-letter table, in one transaction. */
  record DeadLetter(OutboxEvent event, DeadLetterReason reason, int attempts, String error)
      implements Settlement {
    public DeadLetter {
      Objects.requireNonNull(event, "event");
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(error, "error");
    }
  }

  /** Nothing to record (sink unavailable, shutdown): the event will be claimed again. */
  record Release(OutboxEvent event) implements Settlement {
    public Release {
      Objects.requireNonNull(event, "event");
    }
  }

  /** Why an event was dead-lettered; the text is stored in the {@code reason} column. */
  enum DeadLetterReason {
    MAX_ATTEMPTS("max-attempts"),
    PERMANENT("permanent");

    private final String column;

    DeadLetterReason(String column) {
      this.column = column;
    }

    /** The value stored in the dead-letter table's {@code reason} column. */
    public String columnValue() {
      return column;
    }
  }
}
