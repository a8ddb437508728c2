package io.outbox.relay.demo;

import io.outbox.client.OutboxMessage;
import io.outbox.client.OutboxTables;
import io.outbox.client.OutboxWriter;
import io.outbox.relay.Relay;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.config.RelaySettings;
import io.outbox.relay.pipeline.Pipeline;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.schema.Migrator;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * The quickstart: a sample order service writes orders and outbox events in the same transactions,
 * the relay publishes them, and a consumer reads them back; ends with a summary.
 */
public final class Demo {

  /**
   * What the demo does.
   *
   * @param settings the relay settings; the demo runs their single pipeline
   * @param topic where the consumer reads (the pipeline's destination for {@code order} events: a
   *     Kafka topic, a RabbitMQ exchange, a NATS subject or a Redis stream)
   * @param duration how long the order service writes
   * @param rate orders per second (two events each)
   * @param writers concurrent writer threads
   * @param exactlyOnceConfig null for the in-process relay; else the configuration file (with
   *     {@code sink.kafka.delivery = exactly-once}) of a relay the demo runs as a process of its
   *     own and kills with {@code kill -9} half-way through, reading with {@code read_committed}
   */
  public record Options(
      RelaySettings settings,
      String topic,
      Duration duration,
      int rate,
      int writers,
      Path exactlyOnceConfig) {

    boolean exactlyOnce() {
      return exactlyOnceConfig != null;
    }
  }

  private final PrintStream out;

  public Demo(PrintStream out) {
    this.out = out;
  }

  /** Runs the demo; returns the process exit code (0 when every committed event arrived). */
  public int run(Options options) throws Exception {
    PipelineSettings p = options.settings().pipelines().values().iterator().next();
    DatabaseSettings db = p.database();
    prepareDatabase(db);
    OrderService orders =
        new OrderService(
            db.url(), db.user(), db.password(), db.table(), options.writers(), options.rate());
    try (DemoConsumer consumer = consumer(p, options.topic(), options.exactlyOnce())) {
      out.printf(
          "demo: relay %s -> %s%s, destination %s; writing ~%d orders/s (2 events each) for %ds%n",
          p.sourceType(),
          p.sinkType(),
          options.exactlyOnce() ? " exactly-once (read_committed consumer)" : "",
          options.topic(),
          options.rate(),
          options.duration().toSeconds());
      if (options.exactlyOnce()) {
        try {
          return new KilledRelayRun(this, options, db, orders, consumer).run();
        } finally {
          if (p.sourceType().equals("cdc")) {
            dropReplicationSlots(db);
          }
        }
      }
      try (Relay relay = Relay.start(options.settings())) {
        Pipeline pipeline = relay.pipelines().get(0);
        warmUp(db, consumer);
        Thread progress = progress(orders, () -> pipeline.stats().published(), consumer);
        orders.run(options.duration());
        awaitLastEvents(orders, consumer);
        progress.interrupt();
        progress.join();
        // Minus the warm-up event sent before the order service started.
        return summary(orders, pipeline.stats().published() - 1, consumer, null);
      } finally {
        if (p.sourceType().equals("cdc")) {
          dropReplicationSlots(db);
        }
      }
    }
  }

  void awaitLastEvents(OrderService orders, DemoConsumer consumer) throws InterruptedException {
    out.printf("demo: order service done, waiting for the last events...%n");
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!consumer.receivedAll(orders.committed.keySet()) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
  }

  PrintStream out() {
    return out;
  }

  /**
   * A CDC run leaves a replication slot in the demo database, which would keep PostgreSQL from
   * recycling WAL for as long as it exists: the demo drops it when done (and before re-creating the
   * database).
   */
  private void dropReplicationSlots(DatabaseSettings db) throws SQLException {
    String database = db.url().replaceFirst("^.*/([^/?]+)(\\?.*)?$", "$1");
    String admin = db.url().replaceFirst("/[^/?]+(\\?.*)?$", "/postgres$1");
    try (Connection c = DriverManager.getConnection(admin, db.user(), db.password());
        var ps =
            c.prepareStatement(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                    + " WHERE database = ? AND NOT active")) {
      ps.setString(1, database);
      ps.execute();
    }
  }

  /**
   * Sends one event through before the order service starts, so that the connections the relay and
   * the consumer open on first use do not count as the orders' latency.
   */
  /** The consumer of {@code p}'s broker, reading {@code destination}. */
  private static DemoConsumer consumer(
      PipelineSettings p, String destination, boolean readCommitted) throws Exception {
    return switch (p.sinkType()) {
      case "rabbitmq" -> RabbitDemoConsumer.start(p.sinkSettings().getString("uri"), destination);
      case "nats" -> NatsDemoConsumer.start(p.sinkSettings().getString("url"), destination);
      case "redis" -> RedisDemoConsumer.start(p.sinkSettings().getString("uri"), destination);
      default ->
          KafkaDemoConsumer.start(
              p.sinkSettings().getString("bootstrap-servers"), destination, readCommitted);
    };
  }

  void warmUp(DatabaseSettings db, DemoConsumer consumer) throws Exception {
    UUID id;
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password())) {
      id =
          OutboxWriter.forTable(db.table())
              .write(
                  c,
                  OutboxMessage.builder()
                      .aggregate("order", "warm-up")
                      .eventType("DemoStarted")
                      .payload("{}")
                      .build());
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!consumer.has(id) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    consumer.ignore(id);
  }

  private void prepareDatabase(DatabaseSettings db) throws SQLException {
    String url = db.url();
    String user = db.user();
    String password = db.password();
    String database = url.replaceFirst("^.*/([^/?]+)(\\?.*)?$", "$1");
    String admin = url.replaceFirst("/[^/?]+(\\?.*)?$", "/postgres$1");
    dropReplicationSlots(db); // a database with a slot cannot be dropped
    try (Connection c = DriverManager.getConnection(admin, user, password);
        var st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS \"" + database.replace("\"", "\"\"") + "\" WITH (FORCE)");
      st.execute("CREATE DATABASE \"" + database.replace("\"", "\"\"") + "\"");
    }
    var tables = OutboxTables.of(db.table(), db.deadLetterTable());
    out.printf(
        "demo: database %s created; %s%n",
        database, new Migrator(tables).migrate(url, user, password));
    try (Connection c = DriverManager.getConnection(url, user, password)) {
      OrderService.createOrdersTable(c);
    }
  }

  Thread progress(OrderService orders, LongSupplier published, DemoConsumer consumer) {
    long start = System.nanoTime();
    Thread t =
        new Thread(
            () -> {
              try {
                while (true) {
                  Thread.sleep(1000);
                  out.printf(
                      "  %3ds  written %6d   published %6d   consumed %6d%n",
                      (System.nanoTime() - start) / 1_000_000_000L,
                      orders.committed.size(),
                      published.getAsLong(),
                      consumer.distinct());
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "demo-progress");
    t.setDaemon(true);
    t.start();
    return t;
  }

  /**
   * Prints the summary; returns the exit code. {@code kills} is null for the in-process relay; else
   * the exactly-once run's kill -9s, and a duplicate fails the run.
   */
  int summary(OrderService orders, long published, DemoConsumer consumer, String kills) {
    Map<UUID, Long> committed = orders.committed;
    long missing = committed.keySet().stream().filter(id -> !consumer.has(id)).count();
    long leaked = orders.rolledBack.keySet().stream().filter(consumer::has).count();
    long[] latencies =
        committed.entrySet().stream()
            .filter(e -> consumer.has(e.getKey()))
            .mapToLong(e -> consumer.firstSeenNanos(e.getKey()) - e.getValue())
            .toArray();
    Arrays.sort(latencies);
    out.printf("%ndemo summary%n");
    out.printf("  written (committed)        %8d events%n", committed.size());
    out.printf("  rolled back (never sent)   %8d events%n", orders.rolledBack.size());
    out.printf("  published by the relay     %8d events%n", published);
    out.printf("  consumed (distinct)        %8d events%n", consumer.distinct());
    out.printf("  duplicates                 %8d%n", consumer.duplicates());
    out.printf("  key order violations       %8d%n", consumer.orderViolations());
    out.printf(
        "  commit-to-consume latency  p50 %s ms, p99 %s ms, max %s ms%n",
        millis(latencies, 0.50), millis(latencies, 0.99), millis(latencies, 1.0));
    if (kills != null) {
      out.printf("  relay killed (kill -9)     %s%n", kills);
    }
    boolean once = kills == null || consumer.duplicates() == 0;
    boolean ok = missing == 0 && leaked == 0 && orders.failures.get() == 0 && once;
    if (ok && kills != null) {
      out.printf(
          "demo: OK, every committed event arrived exactly once (read_committed), across a kill"
              + " -9 of the relay%n");
    } else if (ok) {
      out.printf("demo: OK, every committed event arrived%n");
    } else {
      out.printf(
          "demo: FAILED: %d committed event(s) missing, %d rolled-back event(s) published,"
              + " %d writer failure(s)%s%n",
          missing,
          leaked,
          orders.failures.get(),
          once ? "" : ", " + consumer.duplicates() + " duplicate(s) in an exactly-once run");
    }
    return ok ? 0 : 1;
  }

  private static String millis(long[] sorted, double quantile) {
    if (sorted.length == 0) {
      return "-";
    }
    int i = (int) Math.min(sorted.length - 1, Math.ceil(quantile * sorted.length) - 1);
    return String.format("%.1f", sorted[Math.max(0, i)] / 1_000_000.0);
  }
}
