package io.outbox.relay.pipeline;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.Settlement;
import io.outbox.relay.spi.Settlement.DeadLetterReason;
import io.outbox.relay.spi.Verdict;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a batch's verdicts into settlements (docs/design.md, "Failure classes"): published rows are
 * marked, a retryable failure counts an attempt and schedules a retry (or dead-letters after {@code
 * max-attempts}), a permanent failure dead-letters at once, and an unavailable sink releases the
 * event without counting anything. Once an event of a key fails, the key's later events in the same
 * batch are released rather than judged, so that they wait behind it. The daemon's lanes and the
 * Kafka Connect connector's task both settle through it.
 */
public final class SettlementPlanner {

  /**
   * The settlements of one batch.
   *
   * @param settlements one per event, in batch order
   * @param sinkUnavailable whether any event met an unavailable sink
   * @param unavailableError the first such error, or {@code null}
   * @param outOfOrder events published although an earlier event of their key failed in the same
   *     batch (the broker accepted them before the failure was known)
   */
  public record Plan(
      List<Settlement> settlements,
      boolean sinkUnavailable,
      String unavailableError,
      List<OutboxEvent> outOfOrder) {

    /**
     * Whether every event was published or dead-lettered: nothing holds its key, so a batch claimed
     * ahead behind this one may be published ({@link io.outbox.relay.spi.Source#claimAhead}).
     */
    public boolean allFinal() {
      for (Settlement s : settlements) {
        if (!(s instanceof Settlement.Published) && !(s instanceof Settlement.DeadLetter)) {
          return false;
        }
      }
      return outOfOrder.isEmpty();
    }

    /** How many events the broker acknowledged (their rows are to be marked published). */
    public int publishedCount() {
      return (int) settlements.stream().filter(s -> s instanceof Settlement.Published).count();
    }
  }

  private final int maxAttempts;
  private final RetryPolicy retryPolicy;

  public SettlementPlanner(int maxAttempts, RetryPolicy retryPolicy) {
    this.maxAttempts = maxAttempts;
    this.retryPolicy = retryPolicy;
  }

  /**
   * @param events the claimed events, in id order
   * @param verdicts one per event, same order
   */
  public Plan plan(List<OutboxEvent> events, List<Verdict> verdicts) {
    if (events.size() != verdicts.size()) {
      throw new IllegalArgumentException(
          "sink answered " + verdicts.size() + " verdicts for " + events.size() + " events");
    }
    List<Settlement> out = new ArrayList<>(events.size());
    KeyOrder.Held held = new KeyOrder.Held();
    List<OutboxEvent> outOfOrder = new ArrayList<>();
    boolean unavailable = false;
    String unavailableError = null;
    for (int i = 0; i < events.size(); i++) {
      OutboxEvent event = events.get(i);
      Verdict verdict = verdicts.get(i);
      if (held.holds(event)) {
        if (verdict.isPublished()) {
          outOfOrder.add(event);
          out.add(new Settlement.Published(event));
        } else {
          out.add(new Settlement.Release(event));
        }
        continue;
      }
      held.record(event, verdict);
      switch (verdict.outcome()) {
        case PUBLISHED -> out.add(new Settlement.Published(event));
        case SINK_UNAVAILABLE -> {
          unavailable = true;
          if (unavailableError == null) {
            unavailableError = verdict.error();
          }
          out.add(new Settlement.Release(event));
        }
        case RETRYABLE -> {
          int attempts = event.attempts() + 1;
          if (attempts >= maxAttempts) {
            out.add(
                new Settlement.DeadLetter(
                    event, DeadLetterReason.MAX_ATTEMPTS, attempts, verdict.error()));
          } else {
            out.add(
                new Settlement.Retry(
                    event, attempts, retryPolicy.delayAfter(attempts), verdict.error()));
          }
        }
        case PERMANENT ->
            out.add(
                new Settlement.DeadLetter(
                    event, DeadLetterReason.PERMANENT, event.attempts() + 1, verdict.error()));
      }
    }
    return new Plan(List.copyOf(out), unavailable, unavailableError, List.copyOf(outOfOrder));
  }
}
