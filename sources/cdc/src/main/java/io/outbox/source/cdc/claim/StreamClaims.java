package io.outbox.source.cdc.claim;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.engine.StreamSession;
import io.outbox.source.cdc.stream.ChangeStream;
import io.outbox.source.postgres.OutstandingClaims;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * A lane's claims from the active {@link StreamSession}: takes the lane's events from the stream
 * (parked rows read back first, {@link LaneReads}), keeps those whose rows are still to be sent
 * ({@link CurrentRows}) and hands them out as a {@link CdcClaim} that settles through the {@link
 * ClaimWriter}.
 */
public final class StreamClaims {

  /** How long a claim waits before it looks again whether a parked event's commit is visible. */
  private static final Duration COMMIT_WAIT = Duration.ofMillis(50);

  private final OutstandingClaims outstanding;
  private final LaneReads reads;
  private final ClaimWriter writer;
  private final Consumer<StreamSession> checkActive;
  private final Ticker ticker;

  /**
   * @param checkActive ends the session, and throws, when its engine failed or the leader lock is
   *     lost
   */
  public StreamClaims(
      OutstandingClaims outstanding,
      LaneReads reads,
      ClaimWriter writer,
      Consumer<StreamSession> checkActive,
      Ticker ticker) {
    this.outstanding = outstanding;
    this.ticker = ticker;
    this.reads = reads;
    this.writer = writer;
    this.checkActive = checkActive;
  }

  /** The lane's next claim from {@code s}, waiting at most {@code maxWait} for events. */
  public Claim claim(StreamSession s, int lane, int maxEvents, Duration maxWait)
      throws InterruptedException {
    outstanding.begin(lane);
    boolean handedOut = false;
    try {
      checkActive.accept(s);
      Deadline deadline = ticker.deadline(maxWait);
      long queryNanos = 0;
      while (true) {
        boolean committing = reads.readBackParked(s, lane);
        Duration wait = deadline.left();
        List<ChangeStream.Item> items = s.stream().take(lane, maxEvents, wait);
        if (items.isEmpty()) {
          if (s.stream().parkedToRead(lane) != null && !deadline.passed()) {
            if (committing) {
              // A parked event's commit is not visible yet: look again in a moment.
              Thread.sleep(
                  Math.min(COMMIT_WAIT.toMillis(), Math.max(1, deadline.nanosLeft() / 1_000_000)));
            }
            continue; // a held-back key was released: its parked rows come first
          }
          checkActive.accept(s);
          return Claim.empty();
        }
        long started = ticker.nanoTime();
        items = reads.current(s, lane, items);
        queryNanos += ticker.nanoTime() - started;
        if (!items.isEmpty()) {
          handedOut = true;
          return new CdcClaim(writer, s.stream(), lane, items, queryNanos, outstanding::end);
        }
        // Every event taken was final already (streamed again after a restart): take the next.
      }
    } finally {
      if (!handedOut) {
        outstanding.end(lane);
      }
    }
  }
}
