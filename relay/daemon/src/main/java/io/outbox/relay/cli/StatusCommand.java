package io.outbox.relay.cli;

import io.outbox.admin.OutboxStatus;
import io.outbox.admin.SlotCreationWait;
import io.outbox.client.OutboxColumns;
import io.outbox.client.OutboxTables;
import io.outbox.relay.config.PipelineSettings;
import io.outbox.relay.spi.DatabaseSettings;
import io.outbox.source.postgres.LanePositions;
import io.outbox.source.postgres.LedgerWatermarks;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code status}: per pipeline, what the database shows — which instance is active, pending rows,
 * the oldest one's age, retries, dead letters and the last error — whether the daemon runs or not.
 */
@Command(
    name = "status",
    description = {
      "Per pipeline, from its database: role (active / standby / not running), pending events,",
      "age of the oldest due one, retrying events, dead letters and the last error; while a CDC",
      "replication slot is being created, the transactions it waits for. Works whether the",
      "daemon runs or not. Exit 0; 1 when a pipeline's database could not be read (the other",
      "pipelines are still shown); 2 for an invalid configuration."
    })
final class StatusCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConfigFileOption config;

  @Mixin HelpOption help;

  @Option(names = "--json", description = "Print JSON instead of a table.")
  boolean json;

  @Override
  public Integer call() {
    List<PipelineStatus> all = new ArrayList<>();
    for (PipelineSettings pipeline : config.load().settings().pipelines().values()) {
      all.add(read(pipeline.name(), pipeline.database(), delivery(pipeline)));
    }
    PrintWriter out = spec.commandLine().getOut();
    out.print(json ? PipelineStatus.json(all) : PipelineStatus.text(all));
    out.flush();
    return all.stream().anyMatch(s -> s.error() != null) ? Main.FAILURE : 0;
  }

  /** {@code sink.kafka.delivery} of a Kafka pipeline, else {@code at-least-once}. */
  private static String delivery(PipelineSettings pipeline) {
    return "kafka".equals(pipeline.sinkType()) && pipeline.sinkSettings().hasPath("delivery")
        ? pipeline.sinkSettings().getString("delivery")
        : "at-least-once";
  }

  private static PipelineStatus read(String pipeline, DatabaseSettings db, String delivery) {
    OutboxTables tables =
        OutboxTables.of(db.table(), db.deadLetterTable())
            .withColumns(OutboxColumns.of(db.columns()));
    OutboxStatus status = LanePositions.status(tables);
    try (Connection c = PipelineDatabase.connect(db)) {
      return PipelineStatus.read(
              pipeline,
              tables.displayTable(),
              status.instances(c, pipeline),
              status.backlog(c, pipeline),
              SlotCreationWait.read(c, pipeline).orElse(null))
          .withDelivery(
              delivery,
              "exactly-once".equals(delivery)
                  ? new LedgerWatermarks(tables).read(c, pipeline)
                  : null);
    } catch (CommandFailedException e) {
      return PipelineStatus.failed(pipeline, tables.displayTable(), e.getMessage());
    } catch (SQLException e) {
      return PipelineStatus.failed(
          pipeline,
          tables.displayTable(),
          "cannot read " + tables.displayTable() + ": " + e.getMessage());
    }
  }
}
