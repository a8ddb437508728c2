package io.outbox.relay.it;

import io.outbox.client.OutboxMessage;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Writes test events into a fixture's outbox: a backlog at once, or a steady stream from a
 * background thread. Events carry a per-key {@code seq} header (and payload), and every key is
 * written by one thread only, so a key's row ids follow its commit order.
 */
final class OutboxLoad implements AutoCloseable {
  private static final int BACKLOG_TRANSACTION = 1_000;

  private final RelayFixture fx;
  private final int keys;
  private final int perTransaction;
  private final Duration pause;
  private final boolean throughRestarts;
  private final Set<UUID> committed = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final Thread thread;

  private OutboxLoad(
      RelayFixture fx, int keys, int perTransaction, Duration pause, boolean throughRestarts) {
    this.fx = fx;
    this.keys = keys;
    this.perTransaction = perTransaction;
    this.pause = pause;
    this.throughRestarts = throughRestarts;
    this.thread = new Thread(this::write, "outbox-load");
  }

  /**
   * Commits {@code events} events over {@code keys} keys ({@code k0}, {@code k1}...), round robin,
   * in transactions of 1,000; returns their event ids.
   */
  static List<UUID> backlog(RelayFixture fx, int events, int keys) throws SQLException {
    List<UUID> ids = new ArrayList<>(events);
    List<OutboxMessage> tx = new ArrayList<>();
    for (int i = 0; i < events; i++) {
      tx.add(RelayFixture.event("k" + (i % keys), i / keys));
      if (tx.size() == BACKLOG_TRANSACTION || i == events - 1) {
        ids.addAll(fx.commit(tx));
        tx.clear();
      }
    }
    return ids;
  }

  /** What {@link #concurrent} wrote: the committed and the rolled-back event ids. */
  record Concurrent(Set<UUID> committed, Set<UUID> rolledBack) {}

  /**
   * The core issue's concurrent scenario: {@code writers} threads commit transactions of 1 to 8
   * events on their own keys ({@code w<writer>-k<n>}, {@code keysPerWriter} each, so a key's ids
   * follow its commit order), rolling back one in ten, until {@code events} are committed.
   */
  static Concurrent concurrent(RelayFixture fx, int writers, int keysPerWriter, int events)
      throws InterruptedException {
    Set<UUID> committed = ConcurrentHashMap.newKeySet();
    Set<UUID> rolledBack = ConcurrentHashMap.newKeySet();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      int writer = w;
      Thread t =
          new Thread(
              () -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                int seq = 0;
                try (Connection c = fx.connect()) {
                  c.setAutoCommit(false);
                  while (committed.size() < events) {
                    List<OutboxMessage> tx = new ArrayList<>();
                    int size = 1 + random.nextInt(8);
                    for (int i = 0; i < size; i++) {
                      String key = "w" + writer + "-k" + random.nextInt(keysPerWriter);
                      tx.add(RelayFixture.event(key, seq++));
                    }
                    List<UUID> ids = fx.writer.writeAll(c, tx);
                    if (random.nextInt(10) == 0) {
                      c.rollback();
                      rolledBack.addAll(ids);
                    } else {
                      c.commit();
                      committed.addAll(ids);
                    }
                  }
                } catch (Exception e) {
                  failure.set(e);
                }
              },
              "outbox-writer-" + w);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    if (failure.get() != null) {
      throw new IllegalStateException("a writer failed", failure.get());
    }
    return new Concurrent(Set.copyOf(committed), Set.copyOf(rolledBack));
  }

  /**
   * Starts a thread that commits a transaction of {@code perTransaction} events on random keys
   * ({@code s0}, {@code s1}...) and then pauses, until {@link #stop()}.
   */
  static OutboxLoad stream(RelayFixture fx, int keys, int perTransaction, Duration pause) {
    OutboxLoad load = new OutboxLoad(fx, keys, perTransaction, pause, false);
    load.thread.start();
    return load;
  }

  /**
   * As {@link #stream}, through restarts of the database: a lost session is opened again, and a
   * transaction whose commit got no answer counts as committed when its rows are there.
   */
  static OutboxLoad streamThroughRestarts(
      RelayFixture fx, int keys, int perTransaction, Duration pause) {
    OutboxLoad load = new OutboxLoad(fx, keys, perTransaction, pause, true);
    load.thread.start();
    return load;
  }

  private void write() {
    int[] seq = new int[keys];
    List<UUID> inDoubt = List.of();
    while (running.get()) {
      try (Connection c = fx.connect()) {
        if (!inDoubt.isEmpty()) {
          committed.addAll(present(c, inDoubt));
          inDoubt = List.of();
        }
        c.setAutoCommit(false);
        while (running.get()) {
          List<OutboxMessage> tx = new ArrayList<>(perTransaction);
          ThreadLocalRandom random = ThreadLocalRandom.current();
          for (int i = 0; i < perTransaction; i++) {
            int key = random.nextInt(keys);
            tx.add(RelayFixture.event("s" + key, seq[key]++));
          }
          List<UUID> ids = fx.writer.writeAll(c, tx);
          inDoubt = ids;
          c.commit();
          inDoubt = List.of();
          committed.addAll(ids);
          // Pacing, not waiting for a condition: the stream's rate.
          TimeUnit.NANOSECONDS.sleep(pause.toNanos());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (SQLException e) {
        if (!throughRestarts) {
          failure.set(e);
          return;
        }
        try {
          TimeUnit.MILLISECONDS.sleep(100); // pacing the reconnection attempts
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          return;
        }
      } catch (Throwable t) {
        failure.set(t);
        return;
      }
    }
  }

  /** The ids of {@code ids} whose rows exist. */
  private static List<UUID> present(Connection c, List<UUID> ids) throws SQLException {
    List<UUID> found = new ArrayList<>();
    try (java.sql.PreparedStatement ps =
        c.prepareStatement("SELECT event_id FROM outbox WHERE event_id = ANY (?)")) {
      ps.setArray(1, c.createArrayOf("uuid", ids.toArray()));
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          found.add(rs.getObject(1, UUID.class));
        }
      }
    }
    return found;
  }

  /** The events committed so far. */
  int committedCount() {
    return committed.size();
  }

  /** Stops the stream and returns every event it committed. */
  Set<UUID> stop() throws InterruptedException {
    running.set(false);
    thread.join(TimeUnit.SECONDS.toMillis(30));
    if (failure.get() != null) {
      throw new IllegalStateException("the event stream failed", failure.get());
    }
    return Set.copyOf(committed);
  }

  /** Stops the stream, if still running, without reporting its failure (cleanup). */
  @Override
  public void close() {
    running.set(false);
    thread.interrupt();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
