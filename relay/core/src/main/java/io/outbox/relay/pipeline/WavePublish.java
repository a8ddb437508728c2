package io.outbox.relay.pipeline;

import io.outbox.relay.spi.Claim;
import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.RoutedEvent;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * At least once: publishes a lane's batch in waves ({@link KeyOrder#waves}: the events of one
 * destination in id order; a key's events after a retry in the next wave), each wave once the one
 * before is answered. An event whose key failed earlier in the batch is held back: released, no
 * attempt counted, so per-key order holds.
 */
final class WavePublish {

  /** What the lane provides. */
  interface Driver {
    /** Right before a wave goes to the sink; throws when the claim may no longer be published. */
    void publishing();

    /** The first wave is on its way: the lane may do other work meanwhile. */
    void started() throws InterruptedException;
  }

  private final Sink sink;
  private final PipelineStats stats;
  private final SinkWait wait;
  private final MessageForm form;
  private final EventTracing tracing;

  WavePublish(
      Sink sink, PipelineStats stats, SinkWait wait, MessageForm form, EventTracing tracing) {
    this.sink = sink;
    this.stats = stats;
    this.wait = wait;
    this.form = form;
    this.tracing = tracing;
  }

  /**
   * Publishes the events of {@code claim}, filling in {@code verdicts} (those already set are not
   * published).
   *
   * @return {@code false} when the batch was abandoned (stop deadline, claim no longer owned)
   */
  boolean publish(
      Claim claim,
      List<OutboxEvent> events,
      String[] destinations,
      Verdict[] verdicts,
      Driver driver)
      throws InterruptedException {
    KeyOrder.Held held = new KeyOrder.Held();
    boolean overlapped = false;
    for (List<Integer> wave : KeyOrder.waves(events, destinations)) {
      List<RoutedEvent> routed = new ArrayList<>(wave.size());
      List<Integer> positions = new ArrayList<>(wave.size());
      for (int i : wave) {
        if (verdicts[i] != null) {
          continue;
        }
        if (held.holds(events.get(i))) {
          // An earlier event of the key failed: this one waits (released, no attempt counted).
          verdicts[i] = KeyOrder.Held.heldBack();
          continue;
        }
        routed.add(form.routed(events.get(i), destinations[i]));
        positions.add(i);
      }
      if (routed.isEmpty()) {
        continue;
      }
      driver.publishing();
      stats.attempts.increment(routed.size());
      EventTracing.Wave traced = tracing.publishing(routed);
      CompletableFuture<List<Verdict>> future = sink.publish(traced.routed()).toCompletableFuture();
      if (!overlapped) {
        overlapped = true;
        driver.started();
      }
      List<Verdict> answered = traced.ended(wait.verdicts(future, routed.size(), claim));
      if (answered == null) {
        return false;
      }
      for (int j = 0; j < answered.size(); j++) {
        int i = positions.get(j);
        verdicts[i] = answered.get(j);
        stats.failed(verdicts[i]);
        held.record(events.get(i), verdicts[i]);
      }
    }
    return true;
  }
}
