package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Ticker;

/**
 * What the stall watch sees of a lane: when it last made progress (a claim answered, a batch
 * settled) and the step it was last seen in. Written by the lane's thread, read by the
 * supervisor's.
 */
final class LaneProgress {

  /** The step of a lane waiting for the sink's verdicts. */
  static final String PUBLISHING = "publishing";

  private final Ticker ticker;

  /** When the lane last made progress, {@link Ticker#nanoTime}. */
  private volatile long progressNanos;

  /** Where the lane was last seen, for the stall report. */
  private volatile String step = "starting";

  LaneProgress(Ticker ticker) {
    this.ticker = ticker;
    this.progressNanos = ticker.nanoTime();
  }

  /** The lane is now at {@code step}. */
  void at(String step) {
    this.step = step;
  }

  void progressed() {
    progressNanos = ticker.nanoTime();
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
