package io.outbox.bench;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The backlog of a streamed CDC drain ({@code --cdc-backlog streamed}), inserted on a thread of its
 * own while the relay streams ({@link BenchDatabase#insertBacklog}: the rows and transactions of
 * the Debezium baseline's backlog). A drain following it reads how many rows are committed: at
 * least {@link #committed}, at most {@link #committing}, whatever commit is in flight.
 */
final class BacklogInsertion implements BenchDatabase.Progress {
  private final long events;
  private final Thread thread;
  private final AtomicLong committing = new AtomicLong();
  private final AtomicLong committed = new AtomicLong();
  private final long startedNanos;
  private volatile long endedNanos;
  private volatile boolean ended;
  private volatile Exception failure;

  private BacklogInsertion(BenchDatabase db, Workload workload) {
    this.events = workload.events();
    this.startedNanos = System.nanoTime();
    this.thread =
        new Thread(
            () -> {
              try {
                db.insertBacklog(workload, this);
                endedNanos = System.nanoTime();
                ended = true;
              } catch (Exception e) {
                failure = e;
              }
            },
            "bench-backlog-insertion");
    thread.setDaemon(true);
  }

  /** Starts inserting the workload's backlog. */
  static BacklogInsertion start(BenchDatabase db, Workload workload) {
    BacklogInsertion insertion = new BacklogInsertion(db, workload);
    insertion.thread.start();
    return insertion;
  }

  @Override
  public void committing(long rows) {
    committing.set(rows);
  }

  @Override
  public void committed(long rows) {
    committed.set(rows);
  }

  /** Rows whose commit returned: a lower bound of the rows a query sees. */
  long committed() {
    return committed.get();
  }

  /** Rows whose commit was sent, returned or not: an upper bound of the rows a query sees. */
  long committing() {
    return committing.get();
  }

  /** Whether every row is committed; fails with the insertion's error if it failed. */
  boolean done() {
    if (failure != null) {
      throw new IllegalStateException(
          "inserting the backlog failed after "
              + committed.get()
              + " of "
              + events
              + " rows: "
              + failure.getMessage(),
          failure);
    }
    return ended;
  }

  /** When the insertion started ({@code System.nanoTime()}). */
  long startedNanos() {
    return startedNanos;
  }

  /** When its last commit returned ({@code System.nanoTime()}); 0 while it runs. */
  long endedNanos() {
    return endedNanos;
  }

  /**
   * Waits up to {@code millis} for the thread, which ends with its last commit or its failure (a
   * drain that failed first leaves it to finish, so that the run's database is dropped after it).
   */
  void awaitEnd(long millis) throws InterruptedException {
    thread.join(millis);
  }
}
