package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.Verdict;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A lane's wait for the sink's answer, for as long as the batch is worth waiting for: not past the
 * pipeline's stop deadline, and not once the claim is no longer owned (the active role was given up
 * or lost meanwhile: the instance taking over claims these events again, so waiting longer only
 * delays it).
 */
final class SinkWait {

  private final LaneHost host;
  private final PipelineStats stats;

  SinkWait(LaneHost host, PipelineStats stats) {
    this.host = host;
    this.stats = stats;
  }

  /** The verdicts of a batch; {@code null} when the batch is abandoned. */
  List<Verdict> verdicts(CompletableFuture<List<Verdict>> future, int size, Claim claim)
      throws InterruptedException {
    try {
      List<Verdict> verdicts = await(future, claim);
      if (verdicts == null && claim != null && !claim.owned()) {
        // Handed to the broker, perhaps taken: the instance now active sends them again.
        stats.unrecordedAfterLeaseLoss.increment(size);
      }
      return verdicts;
    } catch (ExecutionException e) {
      // The SPI forbids it; treat it as an outage rather than blame the events.
      String error = "sink failed the whole batch: " + Lane.oneLine(e.getCause());
      return Collections.nCopies(size, Verdict.unavailable(error));
    }
  }

  /** Any outcome; {@code null} when the batch is abandoned. */
  <T> T await(CompletableFuture<T> future, Claim claim)
      throws InterruptedException, ExecutionException {
    while (true) {
      try {
        return future.get(100, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        if (host.abandonInFlight() || (claim != null && !claim.owned())) {
          return null;
        }
      }
    }
  }
}
