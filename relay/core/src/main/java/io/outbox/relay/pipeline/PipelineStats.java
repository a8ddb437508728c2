package io.outbox.relay.pipeline;

import java.util.concurrent.atomic.LongAdder;

/** Running counters of one pipeline, cheap to update from every lane. */
public final class PipelineStats {
  final LongAdder published = new LongAdder();
  final LongAdder retried = new LongAdder();
  final LongAdder deadLettered = new LongAdder();
  final LongAdder released = new LongAdder();
  final LongAdder batches = new LongAdder();
  final LongAdder sinkUnavailable = new LongAdder();

  public long published() {
    return published.sum();
  }

  public long retried() {
    return retried.sum();
  }

  public long deadLettered() {
    return deadLettered.sum();
  }

  public long released() {
    return released.sum();
  }

  public long batches() {
    return batches.sum();
  }

  /** How many times the sink was found unavailable. */
  public long sinkUnavailable() {
    return sinkUnavailable.sum();
  }

  @Override
  public String toString() {
    return "published="
        + published()
        + " retried="
        + retried()
        + " dead-lettered="
        + deadLettered()
        + " released="
        + released()
        + " batches="
        + batches();
  }
}
