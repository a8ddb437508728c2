package io.outbox.relay.demo;

import io.outbox.client.OutboxTables;
import io.outbox.relay.spi.DatabaseSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The relay of {@code demo --exactly-once}: a process of its own, killed with {@code kill -9}
 * half-way through the order service's run and started again at once, while a {@code
 * read_committed} consumer counts what arrives and how often.
 */
final class KilledRelayRun {
  private static final Pattern IN_DOUBT =
      Pattern.compile("settled (\\d+) in-doubt batch\\(es\\) from the ledger");

  private final Demo demo;
  private final Demo.Options options;
  private final DatabaseSettings db;
  private final OrderService orders;
  private final DemoConsumer consumer;
  private final String countPublished;

  KilledRelayRun(
      Demo demo,
      Demo.Options options,
      DatabaseSettings db,
      OrderService orders,
      DemoConsumer consumer) {
    this.demo = demo;
    this.options = options;
    this.db = db;
    this.orders = orders;
    this.consumer = consumer;
    this.countPublished =
        "SELECT count(*) FROM "
            + OutboxTables.of(db.table(), db.deadLetterTable()).qualifiedTable()
            + " WHERE published_at IS NOT NULL";
  }

  /** Runs the order service across the kill; returns the demo's exit code. */
  int run() throws Exception {
    PrintStream out = demo.out();
    Path config = options.exactlyOnceConfig();
    Path log = config.resolveSibling("relay.log");
    out.printf("demo: the relay runs as a process of its own; its log: %s%n", log);
    RelayChild first = RelayChild.start(config, log);
    RelayChild second = null;
    try {
      demo.warmUp(db, consumer);
      if (!first.isAlive()) {
        throw new IllegalStateException("the relay ended at start-up: see " + log);
      }
      Thread progress = demo.progress(orders, this::published, consumer);
      Thread writing = new Thread(this::writeOrders, "demo-orders");
      writing.start();
      Thread.sleep(options.duration().toMillis() / 2);
      long atKill = published() - 1;
      first.kill9();
      out.printf(
          "demo: kill -9 of the relay (pid %d) with %d events settled; starting a new relay%n",
          first.pid(), atKill);
      second = RelayChild.start(config, log);
      writing.join();
      demo.awaitLastEvents(orders, consumer);
      progress.interrupt();
      progress.join();
      int exit = second.stop(Duration.ofSeconds(30));
      // The summary's line "relay killed (kill -9)", and two more under it.
      String kills =
          String.format(
              "%8d time, at %d events settled%n"
                  + "  in-doubt, from the ledger  %8d batch(es) settled, not sent again%n"
                  + "  new relay's exit code      %8d",
              1, atKill, inDoubtSettled(log), exit);
      // Minus the warm-up event sent before the order service started.
      return demo.summary(orders, published() - 1, consumer, kills);
    } finally {
      first.close();
      if (second != null) {
        second.close();
      }
    }
  }

  private void writeOrders() {
    try {
      orders.run(options.duration());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** What LedgerRecovery logged: "settled N in-doubt batch(es) from the ledger ...". */
  private static long inDoubtSettled(Path log) {
    try (Stream<String> lines = Files.lines(log)) {
      return lines
          .map(IN_DOUBT::matcher)
          .filter(Matcher::find)
          .mapToLong(m -> Long.parseLong(m.group(1)))
          .sum();
    } catch (IOException | UncheckedIOException e) {
      return 0;
    }
  }

  /** Rows the relay marked published (the demo's tables keep {@code on-publish = mark}). */
  private long published() {
    try (Connection c = DriverManager.getConnection(db.url(), db.user(), db.password());
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(countPublished)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      return -1;
    }
  }
}
