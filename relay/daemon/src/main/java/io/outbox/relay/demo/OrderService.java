package io.outbox.relay.demo;

import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The demo's sample application: writes orders and their outbox events in the same transactions, at
 * a fixed total rate from several threads; one transaction in twenty is rolled back on purpose.
 */
final class OrderService {
  private final String url;
  private final String user;
  private final String password;
  private final OutboxWriter writer;
  private final int threads;
  private final int rate;

  /** Commit time (System.nanoTime) of every committed event, by event id. */
  final Map<UUID, Long> committed = new ConcurrentHashMap<>();

  /** Event ids of rolled-back transactions: they must never be published. */
  final Map<UUID, Boolean> rolledBack = new ConcurrentHashMap<>();

  final AtomicLong failures = new AtomicLong();

  OrderService(String url, String user, String password, String table, int threads, int rate) {
    this.url = url;
    this.user = user;
    this.password = password;
    this.writer = OutboxWriter.forTable(table);
    this.threads = threads;
    this.rate = rate;
  }

  static void createOrdersTable(Connection c) throws SQLException {
    try (var st = c.createStatement()) {
      st.execute(
          "CREATE TABLE IF NOT EXISTS orders (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
              + " customer text NOT NULL, amount_cents bigint NOT NULL, status text NOT NULL,"
              + " created_at timestamptz NOT NULL DEFAULT now())");
    }
  }

  /** Writes for {@code duration}, then returns. */
  void run(Duration duration) throws InterruptedException {
    long end = System.nanoTime() + duration.toNanos();
    long intervalNanos = 1_000_000_000L * threads / Math.max(1, rate);
    Thread[] workers = new Thread[threads];
    for (int i = 0; i < threads; i++) {
      workers[i] = new Thread(() -> write(end, intervalNanos), "demo-order-service-" + i);
      workers[i].start();
    }
    for (Thread t : workers) {
      t.join();
    }
  }

  private void write(long end, long intervalNanos) {
    try (Connection c = DriverManager.getConnection(url, user, password)) {
      c.setAutoCommit(false);
      long next = System.nanoTime();
      while (System.nanoTime() < end) {
        writeOneOrder(c);
        next += intervalNanos;
        long sleep = next - System.nanoTime();
        if (sleep > 0) {
          Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
        }
      }
    } catch (SQLException e) {
      failures.incrementAndGet();
      System.err.println("demo: order service stopped: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void writeOneOrder(Connection c) throws SQLException {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long amount = 500 + random.nextLong(50_000);
    String customer = "customer-" + random.nextInt(50);
    long orderId;
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO orders (customer, amount_cents, status) VALUES (?, ?, 'created')"
                + " RETURNING id")) {
      ps.setString(1, customer);
      ps.setLong(2, amount);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        orderId = rs.getLong(1);
      }
    }
    String payload =
        "{\"orderId\":"
            + orderId
            + ",\"customer\":\""
            + customer
            + "\",\"amountCents\":"
            + amount
            + "}";
    OutboxMessage created =
        OutboxMessage.builder()
            .aggregate("order", Long.toString(orderId))
            .eventType("OrderCreated")
            .payload(payload)
            .header("source", "outbox-relay-demo")
            .build();
    OutboxMessage confirmed =
        OutboxMessage.builder()
            .aggregate("order", Long.toString(orderId))
            .eventType("OrderConfirmed")
            .payload("{\"orderId\":" + orderId + "}")
            .build();
    var ids = writer.writeAll(c, java.util.List.of(created, confirmed));
    if (random.nextInt(20) == 0) {
      c.rollback();
      ids.forEach(id -> rolledBack.put(id, Boolean.TRUE));
    } else {
      c.commit();
      long now = System.nanoTime();
      ids.forEach(id -> committed.put(id, now));
    }
  }
}
