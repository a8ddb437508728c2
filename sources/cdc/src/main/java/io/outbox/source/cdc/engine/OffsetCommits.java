package io.outbox.source.cdc.engine;

import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.stream.ChangeStream;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stores a {@link StreamSession}'s stream position: the latest position whose events are all final
 * ({@link ChangeStream#takeCommittable}), through the engine's committer (the engine then confirms
 * it to the slot), every {@code offset-commit-interval} and once more when the session stops; on
 * the way, notes which server process streams the slot ({@link Walsenders}).
 */
final class OffsetCommits {

  private static final Logger log = LoggerFactory.getLogger(StreamSession.class);

  /** How often the walsender streaming the slot is looked up again while streaming. */
  private static final long NOTE_WALSENDER_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final ChangeStream<RecordChangeEvent<SourceRecord>> stream;
  private final Walsenders walsenders;
  private final BooleanSupplier owned;
  private final String pipeline;
  private final String slotName;
  private final Ticker ticker;
  private volatile DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer;
  private RecordChangeEvent<SourceRecord> uncommitted; // under this
  private long notedNanos; // committer thread only
  private long notedBatches; // committer thread only
  private volatile long batches; // handed over by the engine so far

  /**
   * @param owned whether this instance still holds the lease (no I/O)
   */
  OffsetCommits(
      ChangeStream<RecordChangeEvent<SourceRecord>> stream,
      Walsenders walsenders,
      BooleanSupplier owned,
      String pipeline,
      String slotName,
      Ticker ticker) {
    this.stream = stream;
    this.ticker = ticker;
    this.walsenders = walsenders;
    this.owned = owned;
    this.pipeline = pipeline;
    this.slotName = slotName;
  }

  /** The engine hands over a batch, with the committer of its positions (its one thread). */
  void received(DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) {
    batches++;
    this.committer = committer;
  }

  /** Whether the engine handed over anything yet (there is a committer to store through). */
  boolean hasCommitter() {
    return committer != null;
  }

  /**
   * The committer thread: every {@code interval} until the session stops or its engine ended,
   * stores the position and notes the walsender.
   */
  void run(BooleanSupplier stopping, CountDownLatch ended, Duration interval) {
    long every = interval.toMillis();
    while (!stopping.getAsBoolean()) {
      try {
        if (ended.await(every, TimeUnit.MILLISECONDS)) {
          return;
        }
        commitNow();
        noteWalsender();
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /**
   * Notes which server process streams the slot, on the first batch received and every {@link
   * #NOTE_WALSENDER_NANOS} after (a connector restarted after a retriable error streams from a new
   * one): while this instance holds the lease and receives, only its engine can be streaming it.
   */
  private void noteWalsender() {
    long received = batches;
    long now = ticker.nanoTime();
    if (received == notedBatches
        || (notedNanos != 0 && now - notedNanos < NOTE_WALSENDER_NANOS)
        || !owned.getAsBoolean()) {
      return;
    }
    try {
      Walsenders.Walsender w = walsenders.noteStreaming();
      if (w != null) {
        log.info("pipeline {}: slot {} is streamed by {}", pipeline, slotName, w);
      }
      notedNanos = now;
      notedBatches = received;
    } catch (SQLException e) {
      log.debug("pipeline {}: cannot look up who streams the slot: {}", pipeline, e.getMessage());
    }
  }

  /** Stores the latest position whose events are all final, if any is new. */
  synchronized void commitNow() throws InterruptedException {
    RecordChangeEvent<SourceRecord> r = stream.takeCommittable();
    if (r != null) {
      uncommitted = r;
    }
    DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> c = committer;
    if (uncommitted == null || c == null) {
      return;
    }
    try {
      c.markProcessed(uncommitted);
      c.markBatchFinished();
      uncommitted = null;
    } catch (RuntimeException e) {
      log.warn(
          "pipeline {}: storing the stream position failed, retrying: {}",
          pipeline,
          e.getMessage());
    }
  }
}
