package io.outbox.relay.spi;

import java.time.Duration;
import java.util.Optional;

/**
 * Yields committed outbox events in per-key order and makes the pipeline's settlements durable.
 *
 * <p>The pipeline runs a fixed number of lanes; every key belongs to exactly one lane ({@link
 * AggregateKey#lane(int)} or an equivalent stable partition chosen by the source), and each lane
 * has at most one {@link Claim} outstanding, plus at most one claimed ahead ({@link #claimAhead}).
 * A source guarantees that a claim never holds an event whose key has an earlier event that is
 * still outstanding or waiting for a retry, so that the first delivery of a key's events follows
 * {@code id} order; a claim made ahead is the one exception, and the pipeline publishes it only
 * once the claim it was made behind has a final verdict for every event.
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
   * Claims the lane's next batch while {@code inFlight}, the lane's outstanding claim, is still
   * being published: the events that the lane's next {@link #claim} would return once {@code
   * inFlight} were settled with every event published, without waiting for any to appear. Unlike a
   * {@link #claim}, it may hold later events of {@code inFlight}'s keys: the pipeline publishes it
   * only after every event of {@code inFlight} was published or dead-lettered, and otherwise
   * releases it unpublished. This lets a lane publish its next batch while the previous one is
   * being settled.
   *
   * <p>The default claims nothing ({@link Claim#empty()}): the lane then claims, publishes and
   * settles strictly one batch after the other.
   *
   * @param lane the lane of {@code inFlight}
   * @param maxEvents the most events to return
   * @param inFlight the lane's outstanding claim, not yet ended
   * @return a claim, empty when nothing is available right now
   * @throws LeadershipLostException when another instance took over
   * @throws SourceException when the database fails
   */
  default Claim claimAhead(int lane, int maxEvents, Claim inFlight) {
    return Claim.empty();
  }

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

  /**
   * Checks at start-up, where the database can tell, that the outbox and dead-letter tables are
   * usable (columns, types, the relay's privileges), so that a table the relay could never work
   * with stops the daemon at once with one line instead of a pipeline that retries for ever. An
   * unreachable database is not a configuration error: then nothing is reported (activation
   * retries).
   *
   * @return one line per problem, naming the table and column; empty when all is well or the
   *     database cannot be asked now
   */
  default java.util.List<String> schemaProblems() {
    return java.util.List.of();
  }

  /**
   * Gives up the active role because this instance's lanes made no progress for the pipeline's
   * {@code stall-timeout} (a lane stuck in a database call, a broker this instance cannot reach),
   * so that a standby takes over; this instance is a candidate again only after {@code pause}.
   * Lanes then meet a {@link LeadershipLostException} and the pipeline goes back to {@link
   * #activate()}. A source may decline when no standby is waiting (nobody could do better).
   *
   * @param pause how long this instance stays standby at least
   * @param why what made the pipeline give up, for the log
   * @return whether the active role was given up
   */
  default boolean yieldLeadership(Duration pause, String why) {
    return false;
  }

  /**
   * Where this source keeps the ledger watermark of an exactly-once pipeline; empty (the default)
   * when it keeps none, and then the pipeline cannot run with a {@link TransactionalSink}.
   */
  default Optional<LedgerWatermark> ledgerWatermark() {
    return Optional.empty();
  }

  /** Gives up the active role and releases connections, waiting at most {@code timeout}. */
  void close(Duration timeout);

  @Override
  default void close() {
    close(Duration.ofSeconds(30));
  }
}
