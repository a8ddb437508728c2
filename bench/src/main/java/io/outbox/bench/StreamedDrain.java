package io.outbox.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;

/**
 * The CDC drain of {@code --cdc-backlog streamed}: the relay is started on the run's empty outbox;
 * once it streams (its {@code outbox_relay_active} gauge reads 1 and its replication slot is
 * active) the backlog is inserted, with the rows and transactions of the Debezium baseline's
 * backlog, while the harness follows the pending count. The activation's catch-up finds the table
 * empty, so the stream carries the backlog, as it does for Debezium.
 */
final class StreamedDrain {

  private StreamedDrain() {}

  /**
   * Starts the relay, waits until it streams, inserts the backlog and follows it until no row is
   * pending. The figure counts from the first sample that saw a row settled to the one that saw
   * none pending, as {@link RelayDrain#follow} does.
   */
  static RelayDrain.Outcome run(
      String name,
      Path dir,
      RelayUnderTest.Setup setup,
      BenchDatabase db,
      Brokers brokers,
      Workload workload,
      Duration timeout)
      throws Exception {
    Path config = RelayUnderTest.writeConfig(dir, setup, db, brokers);
    Path log = dir.resolve("relay.log");
    long launched = System.nanoTime();
    ChildJvm relay = RelayUnderTest.start(dir, setup, config, db);
    try {
      awaitStreaming(name, relay, log, db, launched + timeout.toNanos(), timeout);
      Start start = new Start(relay.sample(), MachineCpu.now());
      BacklogInsertion insertion = BacklogInsertion.start(db, workload);
      try {
        return follow(name, relay, db, workload.events(), insertion, start, timeout, log);
      } finally {
        // Done already unless the drain failed: then let the insertion end before the run's
        // database is dropped.
        insertion.awaitEnd(Math.min(timeout.toMillis(), 60_000));
      }
    } catch (Exception | Error e) {
      relay.close();
      throw e;
    }
  }

  /** The relay's CPU and the machine's before the insertion began. */
  private record Start(ProcSample relay, MachineCpu machine) {}

  /**
   * Until the relay's source is active and its slot streamed: the activation's catch-up bound is
   * read then (the table is empty), and every row inserted after it reaches the relay through the
   * stream. Not a sleep: a relay slow to start only delays the insertion.
   */
  private static void awaitStreaming(
      String name, ChildJvm relay, Path log, BenchDatabase db, long deadline, Duration timeout)
      throws Exception {
    String slot = RelayUnderTest.slot(db);
    StageMetrics metrics = null;
    while (true) {
      relay.checkAlive();
      if (metrics == null) {
        metrics = endpoint(log);
      }
      if (metrics != null && active(metrics) && db.slotActive(slot)) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            name
                + ": the relay was not streaming slot "
                + slot
                + " (gauge outbox_relay_active at 1, the slot active) "
                + timeout.toSeconds()
                + "s after its start (see "
                + log
                + ")");
      }
      Thread.sleep(RelayDrain.SAMPLE_INTERVAL.toMillis());
    }
  }

  private static StageMetrics endpoint(Path log) {
    try {
      return StageMetrics.fromLog(log);
    } catch (IOException e) {
      return null; // the log is being written: read it again at the next look
    }
  }

  private static boolean active(StageMetrics metrics) throws InterruptedException {
    try {
      return metrics.active(RelayUnderTest.PIPELINE);
    } catch (IOException e) {
      return false; // the endpoint is starting or busy: ask again at the next look
    }
  }

  /**
   * Samples the pending count every {@link RelayDrain#SAMPLE_INTERVAL} until the insertion ended
   * and no row is pending. Rows settled at a sample are the rows committed (between {@link
   * BacklogInsertion#committed} before the count and {@link BacklogInsertion#committing} after it)
   * less the pending ones: a sample counts as the first with settled rows only when the lower bound
   * is positive, and the window counts the backlog less the upper bound, so that a commit in flight
   * never adds to the figure.
   */
  private static RelayDrain.Outcome follow(
      String name,
      ChildJvm relay,
      BenchDatabase db,
      long events,
      BacklogInsertion insertion,
      Start start,
      Duration timeout,
      Path log)
      throws Exception {
    try (Connection c = db.connect()) {
      long deadline = insertion.startedNanos() + timeout.toNanos();
      long firstAt = 0;
      long settledAtFirst = 0;
      ProcSample firstSample = null;
      MachineCpu machineFirst = null;
      long insertedAt = 0;
      long pendingAtInsertEnd = 0;
      ProcSample insertedSample = null;
      MachineCpu machineInserted = null;
      while (true) {
        boolean inserted = insertion.done();
        long low = insertion.committed();
        long pending = db.pending(c);
        long high = insertion.committing();
        long now = System.nanoTime();
        if (firstSample == null && low - pending > 0) {
          firstAt = now;
          settledAtFirst = high - pending;
          firstSample = relay.sample();
          machineFirst = MachineCpu.now();
        }
        if (inserted && insertedSample == null) {
          insertedAt = now;
          pendingAtInsertEnd = pending;
          insertedSample = relay.sample();
          machineInserted = MachineCpu.now();
        }
        if (inserted && pending == 0) {
          ProcSample last = relay.sample();
          MachineCpu machineLast = MachineCpu.now();
          if (firstAt == now) {
            // Everything settled before a sample saw any of it: count from the insertion's start.
            firstAt = insertion.startedNanos();
            settledAtFirst = 0;
            firstSample = start.relay();
            machineFirst = start.machine();
          }
          long counted = events - settledAtFirst;
          Results.Throughput t =
              Results.Throughput.of(
                  name,
                  "rows settled (acked by the broker, then marked/deleted) per second while the"
                      + " change stream carried a backlog inserted once the relay streamed"
                      + " (--cdc-backlog streamed; the Debezium baseline's rows and transactions),"
                      + " from the first settled batch to the last; pending count sampled every "
                      + RelayDrain.SAMPLE_INTERVAL.toMillis()
                      + " ms",
                  counted,
                  Math.max(1, now - firstAt),
                  0,
                  Results.Footprint.between(firstSample, last, counted, machineFirst, machineLast));
          return new RelayDrain.Outcome(
              t,
              relay,
              streamed(
                  events,
                  insertion,
                  now,
                  pendingAtInsertEnd,
                  now - insertedAt,
                  insertedSample,
                  last,
                  machineInserted,
                  machineLast));
        }
        relay.checkAlive();
        if (now > deadline) {
          throw new IllegalStateException(
              name
                  + ": "
                  + pending
                  + " events still pending, "
                  + low
                  + " of "
                  + events
                  + " inserted, "
                  + timeout.toSeconds()
                  + "s after the insertion began (see "
                  + log
                  + ")");
        }
        Thread.sleep(RelayDrain.SAMPLE_INTERVAL.toMillis());
      }
    }
  }

  /** The insertion's figures and the drain after it. */
  private static Results.Streamed streamed(
      long events,
      BacklogInsertion insertion,
      long end,
      long pendingAtInsertEnd,
      long afterNanos,
      ProcSample inserted,
      ProcSample last,
      MachineCpu machineInserted,
      MachineCpu machineLast) {
    double insertSeconds = (insertion.endedNanos() - insertion.startedNanos()) / 1e9;
    double tail = (end - insertion.endedNanos()) / 1e9;
    double bound =
        Math.max(
            Results.Streamed.INSERT_BOUND_SHARE * insertSeconds,
            2 * RelayDrain.SAMPLE_INTERVAL.toMillis() / 1000.0);
    boolean after = pendingAtInsertEnd > 0 && afterNanos > 0;
    return new Results.Streamed(
        Results.round(insertSeconds, 3),
        Results.round(events / insertSeconds, 0),
        Results.round(tail, 3),
        tail <= bound,
        pendingAtInsertEnd,
        after ? Results.round(pendingAtInsertEnd / (afterNanos / 1e9), 0) : null,
        after && inserted != null && last != null
            ? Results.round(
                (last.cpuSeconds() - inserted.cpuSeconds()) * 10_000 / pendingAtInsertEnd, 3)
            : null,
        after && machineInserted != null && machineLast != null
            ? Results.round(machineLast.idleShareSince(machineInserted), 3)
            : null);
  }
}
