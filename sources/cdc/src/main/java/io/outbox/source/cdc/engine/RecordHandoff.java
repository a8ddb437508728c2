package io.outbox.source.cdc.engine;

import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.outbox.client.OutboxColumns;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.CdcSettings;
import io.outbox.source.cdc.stream.ChangeStream;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's change consumer: on the engine's one polling thread, hands each batch of change
 * records to the {@link ChangeStream} (inserts to their lanes, the rest passed on so their position
 * can be committed), and keeps when it last received anything, for the {@link StreamWatch}.
 */
final class RecordHandoff {

  private static final Logger log = LoggerFactory.getLogger(StreamSession.class);

  private final CdcSettings settings;
  private final ChangeStream<RecordChangeEvent<SourceRecord>> stream;
  private final ChangeEvents changes;
  private final OffsetCommits commits;
  private final Clock clock;
  private final String pipeline;
  private final Ticker ticker;
  private volatile long lastReceivedNanos;
  private volatile boolean receiving;

  RecordHandoff(
      CdcSettings settings,
      ChangeStream<RecordChangeEvent<SourceRecord>> stream,
      OffsetCommits commits,
      Clock clock,
      Ticker ticker,
      String pipeline,
      OutboxColumns columns) {
    this.settings = settings;
    this.ticker = ticker;
    this.lastReceivedNanos = ticker.nanoTime();
    this.stream = stream;
    this.changes = new ChangeEvents(EngineProperties.heartbeatPrefix(settings.slotName()), columns);
    this.commits = commits;
    this.clock = clock;
    this.pipeline = pipeline;
  }

  /** Counts the stream as having received something now (when it has just started). */
  void touch() {
    lastReceivedNanos = ticker.nanoTime();
  }

  /**
   * How long the stream has received nothing, on the ticker: since it last received a batch, or
   * finished handing one over.
   */
  long silentNanos() {
    return ticker.nanoTime() - lastReceivedNanos;
  }

  /** Whether a batch is being handed over right now (it may wait for room in a lane). */
  boolean receiving() {
    return receiving;
  }

  void handleBatch(
      List<RecordChangeEvent<SourceRecord>> records,
      DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
      throws InterruptedException {
    receiving = true;
    lastReceivedNanos = ticker.nanoTime();
    commits.received(committer); // the engine's one polling thread
    try {
      hand(records);
    } finally {
      lastReceivedNanos = ticker.nanoTime();
      receiving = false;
    }
  }

  private void hand(List<RecordChangeEvent<SourceRecord>> records) throws InterruptedException {
    if (log.isDebugEnabled()) {
      log.debug("pipeline {}: {} change record(s) from the engine", pipeline, records.size());
    }
    Instant horizon =
        settings.reconcileAfter().isZero() ? null : clock.instant().plus(settings.reconcileAfter());
    // Read outside the stream's lock, handed over in one piece (ChangeStream#offerAll).
    List<ChangeStream.Streamed<RecordChangeEvent<SourceRecord>>> batch =
        new ArrayList<>(records.size());
    for (RecordChangeEvent<SourceRecord> r : records) {
      ChangeEvents.Change change = changes.read(r.record());
      if (change instanceof ChangeEvents.Insert insert) {
        Instant notBefore = insert.availableAt();
        if (horizon != null && notBefore != null && notBefore.isAfter(horizon)) {
          // Delayed beyond reconcile-after: the sweep publishes it when due; holding it here
          // would hold the slot's WAL for as long.
          batch.add(ChangeStream.Streamed.position(r, null));
        } else {
          batch.add(ChangeStream.Streamed.insert(r, insert.event(), notBefore, insert.txId()));
        }
      } else {
        batch.add(
            ChangeStream.Streamed.position(
                r,
                change instanceof ChangeEvents.Heartbeat heartbeat ? heartbeat.emittedAt() : null));
      }
    }
    stream.offerAll(batch); // false: stopping
  }
}
