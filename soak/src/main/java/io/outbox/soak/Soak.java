package io.outbox.soak;

import com.typesafe.config.ConfigFactory;
import io.outbox.client.OutboxTables;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.config.RelayConfigLoader;
import io.outbox.schema.Migrator;
import io.outbox.schema.PartitionedLayout;
import io.outbox.soak.InvariantChecker.Findings;
import io.outbox.soak.InvariantChecker.Violation;
import io.outbox.testkit.KafkaTestSupport;
import io.outbox.testkit.TestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One soak: a fresh database, a private broker, two relay processes on one pipeline (default
 * settings), the writers, a fault every ten seconds for the soak's duration; then everything
 * healed, the writers stopped, the backlog drained, every message read back and the {@link
 * InvariantChecker} run once.
 */
final class Soak {
  private static final Logger log = LoggerFactory.getLogger(Soak.class);
  private static final int PARTITIONS = 4; // with --layout partitioned
  // With --layout partitioned, partitions are emptied under the faults (10,000 ids each: every 2-3
  // minutes at the writers' rate).
  private static final String PARTITION_RETENTION = "10s";
  private static final Duration POLLING_DRAIN = Duration.ofMinutes(3);
  private static final Duration DRAIN_MARGIN = Duration.ofMinutes(2);
  private static final Duration LATE_COPIES = Duration.ofSeconds(5);
  private static final Duration READ_TIMEOUT = Duration.ofMinutes(2);
  private static final String DATABASE_URL = "@database-url@";
  private static final String LANES = "@lanes@";

  /**
   * The lanes of relay {@code a} and {@code b} in an exactly-once soak: each hand-over changes the
   * lane count, so the new active meets ledger partitions of lanes it does not run (issue #30 point
   * 4).
   */
  private static final Map<String, Integer> EXACTLY_ONCE_LANES = Map.of("a", 4, "b", 2);

  private final SoakOptions options;

  Soak(SoakOptions options) {
    this.options = options;
  }

  SoakReport run() throws Exception {
    Instant started = Instant.now();
    Random faultsRandom = new Random(options.seed());
    Path dir = options.directory();
    Files.createDirectories(dir);
    log.info("soak: {}; relay logs in {}", options.describe(), dir);
    try (TestDatabase db = TestDatabase.create("soak");
        SoakBroker broker =
            SoakBroker.start(
                options.sink(), KafkaTestSupport.uniqueTopic("soak"), options.exactlyOnce())) {
      new Migrator(
              OutboxTables.of("outbox", "outbox_dead_letter"),
              options.partitioned()
                  ? new PartitionedLayout(PARTITIONS, SoakOptions.PARTITION_SIZE)
                  : null,
              options.byPosition())
          .migrate(db.url(), db.user(), db.password());
      String template = relayConfig(db, broker);
      PipelineSettings pipeline =
          pipelineSettings(
              template
                  .replace(DATABASE_URL, "jdbc:postgresql://127.0.0.1/soak")
                  .replace(LANES, lanes("a")));
      int duplicateBound = options.exactlyOnce() ? 0 : 2 * pipeline.lanes() * pipeline.batchSize();
      Duration drainTimeout = drainTimeout(pipeline);
      try (RelayPair relays =
              RelayPair.start(
                  dir,
                  db,
                  (name, url) -> template.replace(DATABASE_URL, url).replace(LANES, lanes(name)));
          Workload workload =
              new Workload(
                  db.url(), db.user(), db.password(), options.seed(), broker.canRefuseRetryably());
          RefusalWindows refusals = new RefusalWindows(broker, new Random(options.seed() + 1))) {
        workload.start();
        if (broker.canRefuseRetryably()) {
          refusals.start();
        }
        FaultInjector injector =
            new FaultInjector(
                faultsRandom,
                relays,
                broker,
                options.faultInterval(),
                options.exactlyOnce() ? FaultKind.EXACTLY_ONCE : FaultKind.AT_LEAST_ONCE,
                options.faultOrder());
        Instant faultsFrom = Instant.now();
        injector.runUntil(faultsFrom.plus(options.duration()));
        Instant faultsUntil = Instant.now();
        log.info("soak: faults over; stopping the writers and draining");
        workload.stop();
        refusals.stop();
        injector.noteUnexpectedExits();
        Duration drained = drain(db, drainTimeout);
        Waits.pause(LATE_COPIES);
        injector.noteUnexpectedExits();

        List<WrittenEvent> written = workload.written();
        Set<UUID> committed =
            written.stream()
                .filter(w -> w.outcome() == WrittenEvent.Outcome.COMMITTED)
                .map(WrittenEvent::id)
                .collect(Collectors.toSet());
        List<Delivery> deliveries = broker.deliveries(committed, READ_TIMEOUT);
        Map<UUID, RowState> rows = RowState.withRemovedRows(rows(db), written);
        List<FaultRecord> faults = injector.faults(faultsUntil.plus(drained));
        Map<String, Optional<Integer>> exits = relays.stop();

        Findings findings =
            InvariantChecker.check(
                written,
                rows,
                deliveries,
                faults,
                duplicateBound,
                options.exactlyOnce() ? SentTwice.listedIn(relays.logs()) : null);
        List<Violation> violations = new ArrayList<>(findings.violations());
        violations.addAll(injector.violations());
        exits.forEach(
            (name, code) -> {
              if (code.isEmpty() || code.get() != 0) {
                violations.add(
                    new Violation(
                        FaultInjector.RELAY_EXIT,
                        "relay "
                            + name
                            + " at the end: "
                            + code.map(c -> "exit " + c).orElse("no exit within a minute")
                            + " on SIGTERM"));
              }
            });
        return SoakReport.of(
            options,
            started,
            Instant.now(),
            dir,
            workload.counts(),
            written,
            refusals.windows(),
            drained,
            faults,
            findings,
            violations,
            duplicateBound);
      }
    }
  }

  /**
   * The relays' configuration with {@link #DATABASE_URL} for the database URL: default settings but
   * for the pipeline's name, the private broker, the destination prefix, a free HTTP port, and the
   * CDC slot named after the database (slots are cluster-wide).
   */
  private String relayConfig(TestDatabase db, SoakBroker broker) {
    String source =
        switch (options.source()) {
          case POLLING -> "type = polling";
          case CDC -> "type = cdc, cdc { slot-name = \"" + db.name() + "\" }";
        };
    String sink = broker.sinkConfig();
    return """
        outbox-relay {
          http.port = 0
          pipelines.%s {
            database { url = "%s", user = "%s", password = "%s" }
            source { %s }
            sink { %s }
            routing.destination = "%s.${aggregate_type}"
            %s
            %s
            %s
          }
        }
        """
        .formatted(
            RelayPair.PIPELINE,
            DATABASE_URL,
            db.user(),
            db.password(),
            source,
            sink,
            broker.prefix(),
            options.exactlyOnce() ? "lanes = " + LANES : "",
            options.byPosition() ? "on-publish = position" : "",
            // The relays are told the layout migrate made, so that they plan their claims for it.
            options.partitioned()
                ? "layout = partitioned, partitions { count = "
                    + PARTITIONS
                    + ", size = "
                    + SoakOptions.PARTITION_SIZE
                    + " }, retention { published = "
                    + PARTITION_RETENTION
                    + ", interval = 5s }"
                : "");
  }

  /** Relay {@code name}'s lane count in an exactly-once soak. */
  private static String lanes(String name) {
    return String.valueOf(EXACTLY_ONCE_LANES.get(name));
  }

  /** The pipeline's effective settings (reference defaults included), as the relays read them. */
  private static PipelineSettings pipelineSettings(String hocon) {
    return RelayConfigLoader.standard()
        .load(ConfigFactory.parseString(hocon), "soak")
        .settings()
        .pipelines()
        .get(RelayPair.PIPELINE);
  }

  /**
   * How long the backlog may take to drain once the faults are over: CDC publishes what its stream
   * skipped only through the reconciliation sweep, after {@code reconcile-after}.
   */
  private Duration drainTimeout(PipelineSettings pipeline) {
    if (options.source() == SoakOptions.Source.POLLING) {
      return POLLING_DRAIN;
    }
    return pipeline
        .sourceSettings()
        .getDuration("reconcile-after")
        .plus(pipeline.sourceSettings().getDuration("reconcile-interval"))
        .plus(DRAIN_MARGIN);
  }

  /** Waits until no row is left unpublished; returns how long that took. */
  private static Duration drain(TestDatabase db, Duration timeout) {
    Instant from = Instant.now();
    boolean done =
        Waits.holdsWithin(
            timeout,
            () -> {
              try {
                return RelayPair.pending(db) == 0;
              } catch (SQLException e) {
                return false;
              }
            });
    Duration took = Duration.between(from, Instant.now());
    if (done) {
      log.info("soak: backlog drained in {} s", took.toSeconds());
    } else {
      log.warn(
          "soak: backlog not drained within {} s; checking what there is", timeout.toSeconds());
    }
    return took;
  }

  private static long count(TestDatabase db, String sql) throws SQLException {
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Every row of the outbox and the dead-letter table, by event id. */
  private static Map<UUID, RowState> rows(TestDatabase db) throws SQLException {
    Map<UUID, RowState> rows = new HashMap<>();
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT event_id, id, attempts, available_at, published_at, NULL, last_error"
                    + " FROM outbox UNION ALL"
                    + " SELECT event_id, id, attempts, available_at, published_at, reason,"
                    + " last_error FROM outbox_dead_letter")) {
      while (rs.next()) {
        UUID id = rs.getObject(1, UUID.class);
        rows.put(
            id,
            new RowState(
                id,
                rs.getLong(2),
                rs.getInt(3),
                instant(rs.getTimestamp(4)),
                instant(rs.getTimestamp(5)),
                rs.getString(6),
                rs.getString(7)));
      }
    }
    return rows;
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
