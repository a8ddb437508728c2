package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Deadline;

/**
 * What a {@link Lane} asks of its pipeline: whether to go on, and where to report how the source
 * answers and why the lane ended. {@link PipelineState} is the one host.
 */
interface LaneHost {

  /** Whether lanes go on claiming: the pipeline is neither stopping nor demoted. */
  boolean keepClaiming();

  /** Whether batches in flight are given up: the stop deadline has passed. */
  boolean abandonInFlight();

  /**
   * Sleeps until {@code until} unless the pipeline stops or is demoted meanwhile.
   *
   * @return {@code false} when it did
   */
  boolean sleepUnlessStopping(Deadline until);

  /** The source answered a claim ({@code true}) or failed with a database error. */
  void sourceAnswered(boolean answered);

  /** The lane ends: the active role was lost. */
  void leadershipLost(String why);

  /** The lane ends on an error that the pipeline cannot go on after. */
  void fatal(String where, Throwable error);
}
