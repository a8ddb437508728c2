package io.outbox.relay.spi;

import java.time.Duration;
import java.util.Optional;

/**
 * Yields committed outbox events in per-key order and makes the pipeline's settlements durable.
 *
 * <p>The pipeline runs a fixed number of lanes; every key belongs to exactly one lane ({@link
 * AggregateKey#lane(int)} or an equivalent stable partition chosen by the source), and each lane
 * has at most one {@link Claim} outstanding. A source guarantees that a claim never holds an event
 * whose key has an earlier event that is still outstanding or waiting for a retry, so that the
 * first delivery of a key's events follows {@code id} order.
 *
 * <p>Lifecycle: {@link #activate()} blocks while another instance is active for the pipeline
 * (standby), then the pipeline calls {@link #claim} from its lane threads until it stops; {@link
 * #close(Duration)} releases everything.
 */
public interface Source extends AutoCloseable {

  /**
   * Blocks until this instance is the pipeline's single active publisher (standby until then), and
   * prepares reading.
   *
   * @throws InterruptedException when the pipeline is stopping
   * @throws SourceException when the database cannot be reached; the pipeline retries with backoff
   */
  void activate() throws InterruptedException;

  /**
   * Claims the next batch of the lane, waiting at most {@code maxWait} for events to appear.
   *
   * @param lane the lane, in {@code [0, lanes)}
   * @param maxEvents the most events to return
   * @return a claim, possibly empty (nothing available within {@code maxWait})
   * @throws LeadershipLostException when another instance took over; the pipeline drops back to
   *     {@link #activate()}
   * @throws SourceException when the database fails; the pipeline retries with backoff
   */
  Claim claim(int lane, int maxEvents, Duration maxWait) throws InterruptedException;

  /**
   * Reads what is waiting in the pipeline's outbox (pending rows, oldest age, retries, dead
   * letters, for CDC the slot's retained WAL). Called from the relay's metrics thread every {@code
   * metrics.backlog-interval}, on active and standby instances alike, never from a lane; it must be
   * cheap (a few index scans) and must not hold locks that claims wait for.
   *
   * @return the figures, or empty when this source cannot tell (the default)
   * @throws SourceException when the database cannot be reached; the pipeline then reports its
   *     source as disconnected until a later call succeeds
   */
  default Optional<Backlog> backlog() {
    return Optional.empty();
  }

  /** Gives up the active role and releases connections, waiting at most {@code timeout}. */
  void close(Duration timeout);

  @Override
  default void close() {
    close(Duration.ofSeconds(30));
  }
}
