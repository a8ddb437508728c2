package io.outbox.bench;

import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;

/**
 * The drain measurement: a backlog is in the outbox, the relay is started, and the harness watches
 * the pending count (rows leave the pending index once their broker acknowledged them and the relay
 * marked or deleted them) until it reaches zero.
 */
final class RelayDrain {
  /** How often the pending count is read: fine enough for drains of seconds, cheap for the DB. */
  static final Duration SAMPLE_INTERVAL = Duration.ofMillis(100);

  private RelayDrain() {}

  /**
   * The drain's figure and the relay, still running (the caller stops it).
   *
   * @param streamed the insertion beside a streamed CDC drain ({@link StreamedDrain}); null for a
   *     backlog inserted before the relay started
   */
  record Outcome(Results.Throughput throughput, ChildJvm relay, Results.Streamed streamed) {}

  /**
   * Starts the relay on the backlog of {@code events} rows and waits until none is pending.
   *
   * <p>The figure counts from the first sample that saw rows settled to the sample that saw none
   * pending, so JVM start-up and first connections are not in it (they are in {@code
   * withStartupPerSecond}); the footprint's drain CPU is taken over the same window.
   */
  static Outcome run(
      String name,
      Path dir,
      RelayUnderTest.Setup setup,
      BenchDatabase db,
      Brokers brokers,
      long events,
      Duration timeout)
      throws Exception {
    Path config = RelayUnderTest.writeConfig(dir, setup, db, brokers);
    long launched = System.nanoTime();
    ChildJvm relay = RelayUnderTest.start(dir, setup, config, db);
    try {
      return new Outcome(
          follow(name, relay, db, events, launched, timeout, dir.resolve("relay.log")),
          relay,
          null);
    } catch (Exception | Error e) {
      relay.close();
      throw e;
    }
  }

  /**
   * Samples the pending count every {@link #SAMPLE_INTERVAL} until none is pending; the figure
   * counts from the first sample that saw rows settled to the one that saw none pending.
   *
   * @param launched when the drainer was started or told to start ({@code System.nanoTime()})
   * @param log where to look when the drain times out
   */
  static Results.Throughput follow(
      String name,
      Drainer drainer,
      BenchDatabase db,
      long events,
      long launched,
      Duration timeout,
      Path log)
      throws Exception {
    try (Connection c = db.connect()) {
      long deadline = launched + timeout.toNanos();
      long firstAt = 0;
      long pendingAtFirst = 0;
      ProcSample firstSample = null;
      MachineCpu machineFirst = null;
      while (true) {
        long pending = db.pending(c);
        long now = System.nanoTime();
        if (firstSample == null && pending < events) {
          firstAt = now;
          pendingAtFirst = pending;
          firstSample = drainer.sample();
          machineFirst = MachineCpu.now();
        }
        if (pending == 0) {
          ProcSample last = drainer.sample();
          if (pendingAtFirst == 0) {
            // All settled before the first look: only the time since launch is known.
            firstAt = launched;
            pendingAtFirst = events;
            firstSample = new ProcSample(0, 0);
            machineFirst = null;
          }
          long nanos = Math.max(1, now - firstAt);
          return Results.Throughput.of(
              name,
              "rows settled (acked by the broker, then marked/deleted) per second, from"
                  + " the first settled batch to the last; pending count sampled every "
                  + SAMPLE_INTERVAL.toMillis()
                  + " ms",
              pendingAtFirst,
              nanos,
              events / ((now - launched) / 1e9),
              Results.Footprint.between(
                  firstSample, last, pendingAtFirst, machineFirst, MachineCpu.now()));
        }
        drainer.checkAlive();
        if (now > deadline) {
          throw new IllegalStateException(
              name
                  + ": "
                  + pending
                  + " of "
                  + events
                  + " events still pending after "
                  + timeout.toSeconds()
                  + "s (see "
                  + log
                  + ")");
        }
        Thread.sleep(SAMPLE_INTERVAL.toMillis());
      }
    }
  }
}
