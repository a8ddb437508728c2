package io.outbox.connect;

import io.outbox.relay.pipeline.Router;
import io.outbox.relay.spi.Settlement;
import java.util.List;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The copies of a batch's dead letters for {@code dead-letter.destination}, as the daemon publishes
 * them: routed, checked like any record, and handed to the worker; a copy that cannot be routed or
 * produced is only logged, the dead-letter table stays the truth.
 */
final class DeadLetterCopies {

  // The task's lines, under the task's name.
  private static final Logger log = LoggerFactory.getLogger(OutboxSourceTask.class);

  private final String pipeline;
  private final Router router;
  private final RecordRefusals refusals;

  DeadLetterCopies(String pipeline, Router router, RecordRefusals refusals) {
    this.pipeline = pipeline;
    this.router = router;
    this.refusals = refusals;
  }

  /**
   * Adds to {@code out} the copies of {@code deadLetters}, each recorded in {@code batch} as sent,
   * so that the batch is settled once they are acknowledged too.
   *
   * @param ids the batch's deliveries, as its offsets name them
   */
  void copy(
      LaneBatch batch,
      List<Settlement.DeadLetter> deadLetters,
      String ids,
      List<SourceRecord> out) {
    for (Settlement.DeadLetter dl : deadLetters) {
      String topic;
      String invalid;
      try {
        topic = router.render(dl.event());
        invalid = topic == null ? "the destination is blank" : RecordRefusals.invalidTopic(topic);
      } catch (RuntimeException e) { // a defective row's template variable
        topic = null;
        invalid = e.getMessage();
      }
      SourceRecord copy =
          invalid == null
              ? OutboxRecords.deadLetterCopy(pipeline, batch.lane(), topic, dl, ids)
              : null;
      if (copy != null) {
        invalid = refusals.tooLarge(copy);
      }
      if (invalid != null) {
        log.warn(
            "pipeline {}: dead letter {} not copied to dead-letter.destination: {}",
            pipeline,
            dl.event().eventId(),
            invalid);
        continue;
      }
      batch.copySent(dl.event().id());
      out.add(copy);
    }
  }
}
