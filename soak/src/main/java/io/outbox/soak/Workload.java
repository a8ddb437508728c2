package io.outbox.soak;

import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxWriter;
import io.outbox.soak.WrittenEvent.Outcome;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The soak's writers, each a thread with its own keys (so a key's row ids follow its commit order,
 * as when an application serializes writes to one aggregate): transactions of one event and of
 * several events on several keys, long transactions (2-6 s open: their smaller ids commit after
 * larger ones of other writers), one in ten rolled back, one event in twenty delayed ({@code
 * available_at} 1-20 s ahead). With a broker that can refuse retryably, one more writer sends
 * single events to the {@link SoakBroker#FLAKY} destination, on keys of its own.
 */
final class Workload implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Workload.class);
  static final int WRITERS = 4;
  private static final int KEYS_PER_WRITER = 8;
  private static final int FLAKY_KEYS = 4;
  static final String APPLICATION_NAME = "outbox-soak writer";

  private final String url;
  private final Properties login;
  private final long seed;
  private final boolean flaky;
  private final OutboxWriter writer = OutboxWriter.forTable("outbox");
  private final ConcurrentLinkedQueue<WrittenEvent> written = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicInteger commits = new AtomicInteger();
  private final AtomicInteger rollbacks = new AtomicInteger();
  private final AtomicInteger longTransactions = new AtomicInteger();
  private final AtomicInteger failures = new AtomicInteger();
  private final List<Thread> threads = new ArrayList<>();

  /** Counts of what the writers did, for the report. */
  record Counts(int commits, int rollbacks, int longTransactions, int writerErrors) {}

  Workload(String url, String user, String password, long seed, boolean flaky) {
    this.url = url;
    this.login = new Properties();
    login.setProperty("user", user);
    login.setProperty("password", password);
    login.setProperty("ApplicationName", APPLICATION_NAME);
    this.seed = seed;
    this.flaky = flaky;
  }

  void start() {
    for (int w = 0; w < WRITERS; w++) {
      int writerNumber = w;
      Random random = new Random(seed * 31 + w);
      threads.add(thread("soak-writer-" + w, () -> mixed(random, writerNumber)));
    }
    if (flaky) {
      Random random = new Random(seed * 31 + WRITERS);
      threads.add(thread("soak-writer-flaky", () -> flakyOnly(random)));
    }
    threads.forEach(Thread::start);
  }

  private Thread thread(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    return t;
  }

  /** Stops the writers after their current transaction (a long one ends within its 6 s). */
  void stop() {
    running.set(false);
    for (Thread t : threads) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  List<WrittenEvent> written() {
    return List.copyOf(written);
  }

  Counts counts() {
    return new Counts(commits.get(), rollbacks.get(), longTransactions.get(), failures.get());
  }

  private void mixed(Random random, int w) {
    int[] seq = new int[KEYS_PER_WRITER];
    loop(
        () -> {
          boolean isLong = random.nextInt(100) < 8;
          int size =
              isLong ? 2 + random.nextInt(4) : random.nextInt(100) < 40 ? 1 : 2 + random.nextInt(5);
          List<Pending> tx = new ArrayList<>();
          for (int i = 0; i < size; i++) {
            int k = random.nextInt(KEYS_PER_WRITER);
            Instant due =
                random.nextInt(100) < 5
                    ? Instant.now().plusMillis(1_000 + random.nextInt(19_000))
                    : null;
            tx.add(new Pending(SoakBroker.ORDER, "w" + w + "-k" + k, seq[k]++, due, false));
          }
          Duration open = isLong ? Duration.ofMillis(2_000 + random.nextInt(4_000)) : Duration.ZERO;
          return new Transaction(tx, open, random.nextInt(100) < 10, isLong);
        },
        () -> Duration.ofMillis(10 + random.nextInt(50)));
  }

  private void flakyOnly(Random random) {
    int[] seq = new int[FLAKY_KEYS];
    loop(
        () -> {
          int k = random.nextInt(FLAKY_KEYS);
          Pending p = new Pending(SoakBroker.FLAKY, "f-k" + k, seq[k]++, null, true);
          return new Transaction(List.of(p), Duration.ZERO, random.nextInt(100) < 10, false);
        },
        () -> Duration.ofMillis(100 + random.nextInt(200)));
  }

  private record Pending(String type, String aggregateId, int seq, Instant dueAt, boolean flaky) {
    OutboxMessage message() {
      OutboxMessage.Builder b =
          OutboxMessage.builder()
              .aggregate(type, aggregateId)
              .eventType("Soaked")
              .payload("{\"key\":\"" + aggregateId + "\",\"seq\":" + seq + "}")
              .header("seq", Integer.toString(seq));
      return dueAt == null ? b.build() : b.availableAt(dueAt).build();
    }
  }

  private record Transaction(
      List<Pending> events, Duration openFor, boolean rollback, boolean isLong) {}

  /** Writes the transactions {@code next} draws, pausing {@code pause} between them. */
  private void loop(Supplier<Transaction> next, Supplier<Duration> pause) {
    Connection c = null;
    while (running.get()) {
      Transaction tx = next.get();
      try {
        if (c == null) {
          c = DriverManager.getConnection(url, login);
          c.setAutoCommit(false);
        }
        run(c, tx);
      } catch (SQLException e) {
        failures.incrementAndGet();
        log.warn("soak writer {}: {}", Thread.currentThread().getName(), e.toString());
        close(c);
        c = null;
      }
      Waits.pause(pause.get());
    }
    close(c);
  }

  private void run(Connection c, Transaction tx) throws SQLException {
    int half = tx.isLong() ? tx.events().size() / 2 : tx.events().size();
    List<Pending> events = tx.events();
    List<UUID> ids = new ArrayList<>();
    try {
      ids.addAll(
          writer.writeAll(c, events.subList(0, half).stream().map(Pending::message).toList()));
      if (tx.isLong()) {
        Waits.pause(tx.openFor()); // the transaction stays open: later ones commit meanwhile
        ids.addAll(
            writer.writeAll(
                c, events.subList(half, events.size()).stream().map(Pending::message).toList()));
      }
    } catch (SQLException e) {
      rollbackQuietly(c);
      note(events, ids, Map.of(), Outcome.ROLLED_BACK);
      throw e;
    }
    if (tx.rollback()) {
      c.rollback();
      rollbacks.incrementAndGet();
      note(events, ids, Map.of(), Outcome.ROLLED_BACK);
      return;
    }
    Map<UUID, Long> rowIds;
    try {
      rowIds = rowIds(c, ids);
    } catch (SQLException e) {
      rollbackQuietly(c);
      note(events, ids, Map.of(), Outcome.ROLLED_BACK);
      throw e;
    }
    try {
      c.commit();
    } catch (SQLException e) {
      note(events, ids, rowIds, Outcome.IN_DOUBT);
      throw e;
    }
    commits.incrementAndGet();
    if (tx.isLong()) {
      longTransactions.incrementAndGet();
    }
    note(events, ids, rowIds, Outcome.COMMITTED);
  }

  /**
   * The row ids of the transaction's events, read in it before the commit: retention may remove a
   * row before the soak's end reads the table.
   */
  private static Map<UUID, Long> rowIds(Connection c, List<UUID> ids) throws SQLException {
    Map<UUID, Long> rowIds = new HashMap<>();
    try (PreparedStatement ps =
        c.prepareStatement("SELECT event_id, id FROM outbox WHERE event_id = ANY(?)")) {
      ps.setArray(1, c.createArrayOf("uuid", ids.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rowIds.put(rs.getObject(1, UUID.class), rs.getLong(2));
        }
      }
    }
    return rowIds;
  }

  private void note(List<Pending> events, List<UUID> ids, Map<UUID, Long> rowIds, Outcome outcome) {
    for (int i = 0; i < ids.size(); i++) {
      Pending p = events.get(i);
      written.add(
          new WrittenEvent(
              ids.get(i),
              rowIds.getOrDefault(ids.get(i), 0L),
              p.type() + "/" + p.aggregateId(),
              outcome,
              p.dueAt(),
              p.flaky()));
    }
  }

  private static void rollbackQuietly(Connection c) {
    try {
      c.rollback();
    } catch (SQLException e) {
      // the connection is broken; the transaction is gone with it
    }
  }

  private static void close(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        // already broken
      }
    }
  }

  @Override
  public void close() {
    stop();
  }
}
