package io.outbox.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code --engine connect} drain: the relay's polling source as a Kafka Connect source
 * connector ({@code connect/}) on {@code workers} distributed workers of {@code scripts/services.sh
 * connect}. The workers start first, the backlog is loaded, then the connector is created through
 * the REST API and the pending count is followed exactly as for the daemon ({@link
 * RelayDrain#follow}): rows leave it once the broker acknowledged them and a task marked them.
 */
final class ConnectDrain {

  private ConnectDrain() {}

  /**
   * A connector drain's figure, where its tasks ran, and the other connectors that shared the
   * workers (their tasks share the workers' CPU: the figure is then not the connector's alone).
   */
  record Outcome(Results.Throughput throughput, String placement, List<String> others) {}

  static Outcome run(
      Path home,
      int workers,
      Path dir,
      RelayUnderTest.Setup setup,
      BenchDatabase db,
      Brokers brokers,
      Workload workload,
      Duration timeout)
      throws Exception {
    String name = name(setup, workers);
    try (ConnectCluster cluster =
        ConnectCluster.start(home, workers, dir.resolve("connect-services.log"))) {
      List<String> others = cluster.connectors();
      db.loadBacklog(workload);
      long launched = System.nanoTime();
      cluster.create("bench-" + db.name().replace('_', '-'), config(setup, db, brokers));
      Results.Throughput t =
          RelayDrain.follow(
              name,
              cluster,
              db,
              workload.events(),
              launched,
              timeout,
              home.resolve(".run/connect"));
      Results.Throughput described =
          new Results.Throughput(
              t.name(),
              t.measures()
                  + "; connector created through the REST API (start-up: its tasks starting); CPU"
                  + " and peak RSS of the "
                  + workers
                  + " worker JVM(s) summed",
              t.events(),
              t.seconds(),
              t.eventsPerSecond(),
              t.withStartupPerSecond(),
              t.footprint());
      return new Outcome(described, cluster.placement(), others);
    } finally {
      db.truncate();
    }
  }

  /** The figure's name, e.g. {@code connector->kafka mark 2 workers}. */
  static String name(RelayUnderTest.Setup setup, int workers) {
    return "connector->kafka "
        + setup.onPublish()
        + " "
        + workers
        + (workers == 1 ? " worker" : " workers");
  }

  /**
   * The connector's settings: the daemon's (database, table, lanes, batch size, routing,
   * on-publish) under the connector's keys, a task per lane, and a Kafka transaction per claimed
   * batch (the workers run exactly-once source support).
   */
  static Map<String, String> config(RelayUnderTest.Setup setup, BenchDatabase db, Brokers brokers) {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("connector.class", "io.outbox.connect.OutboxSourceConnector");
    // The connector makes min(tasks.max, lanes) tasks: one per lane.
    c.put("tasks.max", "1024");
    c.put("pipeline", RelayUnderTest.PIPELINE);
    c.put("database.url", db.url());
    c.put("database.user", db.user());
    if (!db.password().isEmpty()) {
      c.put("database.password", db.password());
    }
    c.put("table", BenchDatabase.TABLE);
    c.put("on-publish", setup.onPublish());
    if (setup.lanes() != null) {
      c.put("lanes", setup.lanes().toString());
    }
    if (setup.batchSize() != null) {
      c.put("batch-size", setup.batchSize().toString());
    }
    c.put("routing.destination", brokers.prefix() + "${aggregate_type}");
    c.put("exactly.once.support", "required");
    c.put("transaction.boundary", "connector");
    return c;
  }
}
