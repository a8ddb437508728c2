package io.outbox.source.cdc;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.outbox.relay.spi.SourceException;
import io.outbox.schema.OutboxTables;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of the Debezium engine for an active instance: the engine thread hands change records to
 * the {@link ChangeStream}; a committer thread stores, every {@code offset-commit-interval}, the
 * latest position whose events are all final (the engine then confirms it to the slot); a sweep
 * thread runs the {@link ReconcileSweep}; for a new slot, a catch-up thread runs the {@link
 * CatchUp}. Ends on {@link #stop} or when the engine fails.
 */
final class StreamSession {

  private static final Logger log = LoggerFactory.getLogger(StreamSession.class);

  private final CdcSettings settings;
  private final CdcConnections connections;
  private final OutboxTables tables;
  private final String pipeline;
  private final ChangeStream<RecordChangeEvent<SourceRecord>> stream;
  private final ChangeEvents changes;
  private final ReconcileSweep sweep;
  private CatchUp catchUp;
  private final CountDownLatch started = new CountDownLatch(1);
  private final CountDownLatch ended = new CountDownLatch(1);
  private final AtomicReference<String> failure = new AtomicReference<>();
  private final Clock clock;
  private volatile DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer;
  private volatile boolean stopping;
  private RecordChangeEvent<SourceRecord> uncommitted; // committer thread only
  private String registration;
  private DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
  private Thread engineThread;
  private Thread committerThread;
  private Thread sweepThread;
  private Thread catchUpThread;

  private final PostgresOffsetStore.Fence fence;

  StreamSession(
      CdcSettings settings,
      CdcConnections connections,
      OutboxTables tables,
      String pipeline,
      int lanes,
      Clock clock,
      PostgresOffsetStore.Fence fence) {
    this.settings = settings;
    this.fence = fence;
    this.connections = connections;
    this.tables = tables;
    this.pipeline = pipeline;
    this.clock = clock;
    this.stream = new ChangeStream<>(lanes, settings.laneBuffer(), clock, pipeline);
    this.changes = new ChangeEvents(EngineProperties.heartbeatPrefix(settings.slotName()));
    this.sweep = new ReconcileSweep(connections, settings, tables, pipeline, stream);
  }

  ChangeStream<RecordChangeEvent<SourceRecord>> stream() {
    return stream;
  }

  /**
   * Before {@link #start}: the rows up to id {@code upTo} are caught up from the table ahead of the
   * stream, whose events wait until they are read ({@link CatchUp}).
   */
  void catchUp(long upTo) {
    catchUp = new CatchUp(connections, settings, tables, pipeline, stream, fence, clock, upTo);
    stream.beginCatchUp();
  }

  /**
   * Starts the engine and waits until its task runs.
   *
   * @throws SourceException when the engine fails to start, or does not within start-timeout
   */
  void start() throws InterruptedException {
    registration =
        PostgresOffsetStore.register(
            new PostgresOffsetStore.Target(
                connections, tables.qualifiedOffsetsTable(), pipeline, fence));
    engine =
        DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
            .using(EngineProperties.of(settings, connections, tables, pipeline, registration))
            .using(clock)
            .using(
                new DebeziumEngine.ConnectorCallback() {
                  @Override
                  public void taskStarted() {
                    started.countDown();
                  }
                })
            .using(this::completed)
            .notifying(
                (DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>>) this::handleBatch)
            .build();
    engineThread = thread("engine", engine);
    engineThread.start();
    boolean up = false;
    long deadline = System.nanoTime() + settings.startTimeout().toNanos();
    while (System.nanoTime() < deadline) {
      if (started.await(50, TimeUnit.MILLISECONDS)) {
        up = true;
        break;
      }
      if (ended.getCount() == 0) {
        break;
      }
    }
    if (!up || failure.get() != null) {
      String why = failure.get();
      stop(Duration.ofSeconds(10));
      throw new SourceException(
          "pipeline "
              + pipeline
              + ": the change stream from slot "
              + settings.slotName()
              + " on "
              + connections.where()
              + " did not start"
              + (why != null ? ": " + why : " within " + settings.startTimeout()));
    }
    committerThread = thread("offsets", this::commitLoop);
    committerThread.start();
    if (!settings.reconcileAfter().isZero()) {
      sweepThread = thread("sweep", this::sweepLoop);
      sweepThread.start();
    }
    if (catchUp != null) {
      catchUpThread = thread("catch-up", catchUp::run);
      catchUpThread.start();
    }
    log.info(
        "pipeline {}: streaming {} from slot {} (publication {}) on {}",
        pipeline,
        tables.displayTable(),
        settings.slotName(),
        settings.publicationName(),
        connections.where());
  }

  private Thread thread(String role, Runnable body) {
    Thread t = new Thread(body, "outbox-relay-" + pipeline + "-cdc-" + role);
    t.setDaemon(true);
    return t;
  }

  private void handleBatch(
      List<RecordChangeEvent<SourceRecord>> records,
      DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
      throws InterruptedException {
    this.committer = committer;
    if (log.isDebugEnabled()) {
      log.debug("pipeline {}: {} change record(s) from the engine", pipeline, records.size());
    }
    Instant horizon =
        settings.reconcileAfter().isZero() ? null : clock.instant().plus(settings.reconcileAfter());
    for (RecordChangeEvent<SourceRecord> r : records) {
      ChangeEvents.Change change = changes.read(r.record());
      if (change instanceof ChangeEvents.Insert insert) {
        Instant notBefore = insert.availableAt();
        if (horizon != null && notBefore != null && notBefore.isAfter(horizon)) {
          // Delayed beyond reconcile-after: the sweep publishes it when due; holding it here
          // would hold the slot's WAL for as long.
          stream.pass(r);
        } else if (!stream.offer(r, insert.event(), notBefore)) {
          return; // stopping
        }
      } else {
        if (change instanceof ChangeEvents.Heartbeat heartbeat) {
          stream.reached(heartbeat.emittedAt());
        }
        stream.pass(r);
      }
    }
  }

  private void completed(boolean success, String message, Throwable error) {
    if (!stopping) {
      String why =
          message + (error != null && error.getMessage() != null ? ": " + error.getMessage() : "");
      failure.compareAndSet(null, why);
      log.error("pipeline {}: the change stream stopped: {}", pipeline, why);
    }
    stream.close();
    ended.countDown();
  }

  /** Why the engine stopped on its own, or {@code null} while it runs. */
  String failure() {
    return failure.get();
  }

  private void commitLoop() {
    long every = settings.offsetCommitInterval().toMillis();
    while (!stopping) {
      try {
        if (ended.await(every, TimeUnit.MILLISECONDS)) {
          return;
        }
        commitNow();
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Stores the latest position whose events are all final, if any is new. */
  private synchronized void commitNow() throws InterruptedException {
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

  private void sweepLoop() {
    long every = settings.reconcileInterval().toMillis();
    while (!stopping) {
      try {
        if (ended.await(every, TimeUnit.MILLISECONDS)) {
          return;
        }
        sweep.run();
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        log.warn("pipeline {}: the reconcile sweep failed, retrying: {}", pipeline, e.getMessage());
      }
    }
  }

  /** Stores the final position, stops the engine and the threads; waits at most {@code timeout}. */
  void stop(Duration timeout) {
    if (ended.getCount() > 0 && committer != null) {
      try {
        commitNow();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    stopping = true;
    stream.close();
    interrupt(committerThread);
    interrupt(sweepThread);
    interrupt(catchUpThread);
    long deadline = System.nanoTime() + Math.max(1, timeout.toNanos());
    if (engine != null) {
      closeEngine(deadline);
    }
    if (engineThread != null) {
      try {
        engineThread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (registration != null) {
      PostgresOffsetStore.unregister(registration);
    }
  }

  /**
   * Stops the engine. It refuses while its task is still starting (a start given up by {@code
   * start-timeout}); left alone, that task would then stream on: so the refusal is retried until
   * the task is up and can be stopped, within the deadline.
   */
  private void closeEngine(long deadline) {
    while (true) {
      try {
        engine.close();
        return;
      } catch (IllegalStateException e) {
        if (e.getMessage() == null || !e.getMessage().contains("tasks are starting")) {
          return; // Debezium: "Engine has been already shut down"
        }
        if (System.nanoTime() - deadline >= 0) {
          log.warn(
              "pipeline {}: the change stream did not stop in time; its replication connection is"
                  + " ended instead: {}",
              pipeline,
              e.getMessage());
          return;
        }
        try {
          TimeUnit.MILLISECONDS.sleep(100); // the task finishes starting meanwhile
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          return;
        }
      } catch (IOException | RuntimeException e) {
        log.warn("pipeline {}: stopping the change stream: {}", pipeline, e.getMessage());
        return;
      }
    }
  }

  private static void interrupt(Thread t) {
    if (t != null) {
      t.interrupt();
    }
  }
}
