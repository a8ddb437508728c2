package io.outbox.relay.pipeline;

/**
 * What the stall watch sees of a lane: when it last made progress (a claim answered, a batch
 * settled) and the step it was last seen in. Written by the lane's thread, read by the
 * supervisor's.
 */
final class LaneProgress {

  /** The step of a lane waiting for the sink's verdicts. */
  static final String PUBLISHING = "publishing";

  /** When the lane last made progress, {@link System#nanoTime}. */
  private volatile long progressNanos = System.nanoTime();

  /** Where the lane was last seen, for the stall report. */
  private volatile String step = "starting";

  /** The lane is now at {@code step}. */
  void at(String step) {
    this.step = step;
  }

  void progressed() {
    progressNanos = System.nanoTime();
  }

  /** Nanoseconds since the lane last made progress, as of {@code now}. */
  long stalledFor(long now) {
    return now - progressNanos;
  }

  /** What the lane was doing when last seen. */
  String step() {
    return step;
  }
}
