package io.outbox.relay.spi;

import java.util.Objects;

/**
 * A sink's answer for one event of a batch, given only once the broker acknowledged or refused it.
 *
 * @param outcome what happened
 * @param error one line describing the failure, without payload data; {@code null} when published
 */
public record Verdict(Outcome outcome, String error) {

  /** The failure classes of docs/design.md, plus success. */
  public enum Outcome {
    /** The broker acknowledged the event. */
    PUBLISHED,
    /**
     * The sink could not reach the broker (down, connection lost, the whole batch timed out). Not
     * the event's fault: no attempt is counted and the pipeline pauses until the sink recovers.
     */
    SINK_UNAVAILABLE,
    /** This event failed in a way that may pass later: an attempt is counted. */
    RETRYABLE,
    /** This event can never be published (too large, invalid destination...): dead-lettered. */
    PERMANENT
  }

  private static final java.util.regex.Pattern LINE_BREAKS =
      java.util.regex.Pattern.compile("[\\r\\n\\t]+");
  private static final Verdict PUBLISHED_VERDICT = new Verdict(Outcome.PUBLISHED, null);

  public Verdict {
    Objects.requireNonNull(outcome, "outcome");
    if (outcome != Outcome.PUBLISHED) {
      Objects.requireNonNull(error, "error");
      error = oneLine(error);
    }
  }

  public static Verdict published() {
    return PUBLISHED_VERDICT;
  }

  public static Verdict unavailable(String error) {
    return new Verdict(Outcome.SINK_UNAVAILABLE, error);
  }

  public static Verdict retryable(String error) {
    return new Verdict(Outcome.RETRYABLE, error);
  }

  public static Verdict permanent(String error) {
    return new Verdict(Outcome.PERMANENT, error);
  }

  /**
   * The verdict of an event a sink did not send because an earlier event of its aggregate in the
   * same batch failed with {@code earlier}: same outcome, so that the key waits behind it.
   */
  public static Verdict heldBehind(Verdict earlier) {
    return new Verdict(
        earlier.outcome(),
        "not sent: an earlier event of the same aggregate failed: " + earlier.error());
  }

  public boolean isPublished() {
    return outcome == Outcome.PUBLISHED;
  }

  /**
   * Whether this verdict holds back its event's later events of the same key (docs/design.md,
   * "Lanes and per-key order"): a retryable or sink-unavailable one does (the event goes again, and
   * its key waits behind it); a published or permanent (dead-lettered) one does not.
   */
  public boolean holdsBackItsKey() {
    return outcome == Outcome.RETRYABLE || outcome == Outcome.SINK_UNAVAILABLE;
  }

  /** Errors are stored in {@code last_error}: one line, bounded length. */
  static String oneLine(String s) {
    String flat = LINE_BREAKS.matcher(s).replaceAll(" ").strip();
    return flat.length() <= 1000 ? flat : flat.substring(0, 997) + "...";
  }
}
