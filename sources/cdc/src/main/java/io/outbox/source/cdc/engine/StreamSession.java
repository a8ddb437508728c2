package io.outbox.source.cdc.engine;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.Deadline;
import io.outbox.relay.spi.SourceException;
import io.outbox.relay.spi.Ticker;
import io.outbox.source.cdc.CdcConnections;
import io.outbox.source.cdc.CdcSettings;
import io.outbox.source.cdc.lease.Fence;
import io.outbox.source.cdc.stream.ChangeStream;
import io.outbox.source.cdc.table.CatchUp;
import io.outbox.source.cdc.table.ReconcileSweep;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of the Debezium engine for an active instance: the engine thread hands change records to
 * the {@link ChangeStream}; a committer thread stores, every {@code offset-commit-interval}, the
 * latest position whose events are all final ({@link OffsetCommits}; the engine then confirms it to
 * the slot); a sweep thread runs the {@link ReconcileSweep}; for a new slot, a catch-up thread runs
 * the {@link CatchUp}; a watch thread stops the engine at once when this instance no longer holds
 * the lease, and restarts the stream when it receives nothing, not even a heartbeat, for a while
 * ({@link StreamWatch#stallTimeout}). Ends on {@link #stop} or when the engine fails.
 *
 * <p>Whether the engine is gone is answered from what the session owns ({@link EngineRemains}),
 * never from thread names: the engine's {@code run()} runs on the session's own executor, and is
 * over when its future is done; every call into the connector task passes the session's {@link
 * TaskGate}, which after a stop lets none in again and stops the task once the last call in flight
 * has left (a task left alone restarts its connector after a retriable error and would take the
 * slot back from the instance that is active now); and the server processes that streamed the slot
 * to this session ({@link Walsenders}) are gone from {@code pg_stat_activity}.
 */
public final class StreamSession {

  private static final Logger log = LoggerFactory.getLogger(StreamSession.class);

  /** Debezium waits up to task.management.timeout.ms (15 s) for its task to stop. */
  public static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  private final CdcSettings settings;
  private final CdcConnections connections;
  private final OutboxTables tables;
  private final String pipeline;
  private final ChangeStream<RecordChangeEvent<SourceRecord>> stream;
  private final RecordHandoff handoff;
  private final ReconcileSweep sweep;
  private CatchUp catchUp;
  private final CountDownLatch started = new CountDownLatch(1);
  private final CountDownLatch ended = new CountDownLatch(1);
  private final AtomicReference<String> failure = new AtomicReference<>();
  private final Clock clock;
  private final Ticker ticker;
  private volatile boolean stopping;
  private String registration;
  private DebeziumEngine<RecordChangeEvent<SourceRecord>> engine; // guarded by stopLock
  private final SessionThreads threads;

  private final Fence fence;
  private final BooleanSupplier owned;
  private final TaskGate gate;
  private final OffsetCommits commits;
  private final EngineRemains remains;
  private final EngineSockets sockets = new EngineSockets();
  private final String socketsRegistration = sockets.register();
  private final AtomicBoolean stoppingInBackground = new AtomicBoolean();
  private final Object stopLock = new Object();

  /**
   * @param owned whether this instance still holds the lease (no I/O): the engine is stopped as
   *     soon as it turns false
   */
  public StreamSession(
      CdcSettings settings,
      CdcConnections connections,
      OutboxTables tables,
      String pipeline,
      int lanes,
      Clock clock,
      Ticker ticker,
      Fence fence,
      BooleanSupplier owned) {
    this.settings = settings;
    this.ticker = ticker;
    this.fence = fence;
    this.owned = owned;
    this.gate = new TaskGate(pipeline);
    this.threads = new SessionThreads(pipeline);
    Walsenders walsenders =
        new Walsenders(() -> connections.dedicated("check"), settings.slotName());
    this.connections = connections;
    this.tables = tables;
    this.pipeline = pipeline;
    this.clock = clock;
    this.stream = new ChangeStream<>(lanes, settings.laneBuffer(), clock, ticker, pipeline);
    this.commits =
        new OffsetCommits(stream, walsenders, owned, pipeline, settings.slotName(), ticker);
    this.remains =
        new EngineRemains(
            gate, walsenders, () -> stopping, sockets::abort, pipeline, settings.slotName());
    this.handoff =
        new RecordHandoff(settings, stream, commits, clock, ticker, pipeline, tables.columns());
    this.sweep = new ReconcileSweep(connections, settings, tables, pipeline, stream);
  }

  public ChangeStream<RecordChangeEvent<SourceRecord>> stream() {
    return stream;
  }

  /**
   * Before {@link #start}: the pending rows up to the bound are caught up from the table ahead of
   * the stream, whose events wait until they are read ({@link CatchUp}).
   */
  public void catchUp(CatchUp.Bound bound) {
    catchUp =
        new CatchUp(connections, settings, tables, pipeline, stream, fence, clock, ticker, bound);
    stream.beginCatchUp();
  }

  /**
   * Starts the engine and waits until its task runs.
   *
   * @throws SourceException when the engine fails to start, or does not within start-timeout
   */
  public void start() throws InterruptedException {
    registration =
        PostgresOffsetStore.register(
            new PostgresOffsetStore.Target(
                connections, tables.qualifiedOffsetsTable(), pipeline, fence, socketsRegistration));
    ExecutorService runner =
        Executors.newSingleThreadExecutor(r -> threads.named("engine", r)); // one run, then it ends
    remains.running(runner.submit(this::runEngine));
    runner.shutdown();
    boolean up = false;
    Deadline deadline = ticker.deadline(settings.startTimeout());
    while (!deadline.passed()) {
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
    handoff.touch();
    threads.start(
        "offsets", () -> commits.run(() -> stopping, ended, settings.offsetCommitInterval()));
    if (!settings.reconcileAfter().isZero()) {
      threads.start("sweep", () -> sweep.loop(() -> stopping, ended));
    }
    if (catchUp != null) {
      threads.start("catch-up", catchUp::run);
    }
    threads.start(
        "watch",
        new StreamWatch(
            settings, connections, handoff, owned, () -> stopping, ended, this::abandon, pipeline));
    log.info(
        "pipeline {}: streaming {} from slot {} (publication {}) on {}",
        pipeline,
        tables.displayTable(),
        settings.slotName(),
        settings.publicationName(),
        connections.where());
  }

  /** The engine thread: builds the engine (unless stopped meanwhile) and runs it. */
  private void runEngine() {
    try {
      DebeziumEngine<RecordChangeEvent<SourceRecord>> built =
          DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
              .using(
                  EngineProperties.of(
                      settings,
                      connections,
                      tables,
                      pipeline,
                      registration,
                      gate.open(),
                      socketsRegistration))
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
                  (DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>>)
                      handoff::handleBatch)
              .build();
      synchronized (stopLock) {
        if (stopping) {
          return;
        }
        engine = built;
      }
      built.run();
    } catch (RuntimeException e) {
      failure.compareAndSet(null, "the engine failed: " + e.getMessage());
      log.error("pipeline {}: the change stream failed", pipeline, e);
    } finally {
      stream.close();
      ended.countDown();
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
  public String failure() {
    return failure.get();
  }

  /**
   * Stops the engine as {@link #stop} does, on a thread of its own: for an instance that lost the
   * lease, which stands by at once (its next activation waits until the engine is gone, {@link
   * StreamSessions#awaitNoEngineLeft}) instead of waiting for an engine whose database may not
   * answer.
   */
  public void stopInBackground() {
    if (!stoppingInBackground.compareAndSet(false, true)) {
      return; // once: each lane that finds the lease lost asks
    }
    threads
        .named(
            "stop",
            () -> {
              long began = ticker.nanoTime();
              // Its connections may be black-holed: closed first, its calls fail at once.
              int closed = sockets.abort();
              boolean gone = stop(STOP_TIMEOUT);
              log.info(
                  "pipeline {}: the change stream's engine of the session whose lease was lost {}"
                      + " {} ms after its {} connection(s) were closed",
                  pipeline,
                  gone ? "stopped" : "is not gone",
                  TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - began),
                  closed);
            })
        .start();
  }

  /** Ends the session for {@code why} and stops the engine, from the watch thread. */
  private void abandon(String why) {
    failure.compareAndSet(null, why);
    log.warn("pipeline {}: stopping the change stream: {}", pipeline, why);
    stop(STOP_TIMEOUT);
  }

  /**
   * Stores the final position, stops the engine and the threads and waits, at most {@code timeout},
   * until the engine is gone ({@link #engineLeft}); may be called again (it then only waits).
   *
   * @return whether the engine is gone
   */
  public boolean stop(Duration timeout) {
    Deadline deadline = ticker.deadline(timeout);
    DebeziumEngine<RecordChangeEvent<SourceRecord>> closing;
    synchronized (stopLock) {
      boolean first = !stopping;
      if (first && ended.getCount() > 0 && commits.hasCommitter()) {
        try {
          commits.commitNow();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      stopping = true;
      closing = first ? engine : null;
    }
    stream.close();
    threads.interrupt();
    if (closing != null) {
      closeEngine(closing);
    }
    // Whatever the engine did: no call reaches its connector again, and its task is stopped.
    gate.close();
    boolean gone = remains.awaitGone(deadline);
    if (registration != null) {
      PostgresOffsetStore.unregister(registration);
    }
    if (gone) {
      sockets.close();
    }
    return gone;
  }

  /** Whether the engine was stopped and nothing of it is left ({@link #engineLeft}). */
  boolean engineGone() {
    boolean gone = stopping && remains.left().isEmpty();
    if (gone) {
      sockets.close(); // a stop that timed out before the engine went: forgotten now
    }
    return gone;
  }

  /** What of this session's engine is still running or connected ({@link EngineRemains#left}). */
  List<String> engineLeft() {
    return remains.left();
  }

  /**
   * Stops the engine. It refuses while its task is still starting (a start given up by {@code
   * start-timeout}): the closed {@link TaskGate} then stops that task as soon as its start returns,
   * and refuses its first poll, which ends the engine.
   */
  private void closeEngine(DebeziumEngine<RecordChangeEvent<SourceRecord>> engine) {
    try {
      engine.close();
    } catch (IllegalStateException e) {
      log.debug("pipeline {}: stopping the change stream: {}", pipeline, e.getMessage());
    } catch (IOException | RuntimeException e) {
      log.warn("pipeline {}: stopping the change stream: {}", pipeline, e.getMessage());
    }
  }
}
