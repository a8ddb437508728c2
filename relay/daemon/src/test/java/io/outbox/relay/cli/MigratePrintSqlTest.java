package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.client.OutboxTables;
import io.outbox.schema.Migrator;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code migrate --print-sql}: the migrations' SQL for the configured tables, no database. */
class MigratePrintSqlTest {

  @TempDir Path dir;

  /** Nothing listens on port 1: a connection attempt would fail the command. */
  private static String pipeline(String name, String database, String extra) {
    return "outbox-relay.pipelines."
        + name
        + " {\n  database { url = \"jdbc:postgresql://127.0.0.1:1/"
        + database
        + "?connectTimeout=1\", user = app }\n  "
        + extra
        + "\n}\n";
  }

  @Test
  void printsOneScriptPerOutboxWithoutConnecting() throws Exception {
    Path config = dir.resolve("relay.conf");
    Files.writeString(
        config,
        pipeline("orders", "shop", "")
            + pipeline("orders-eu", "shop_eu", "")
            + pipeline("payments", "shop", "table = \"billing.payments_outbox\""));

    CommandLineRun run = CommandLineRun.of("migrate", "--print-sql", "--config", config.toString());

    assertThat(run.err()).isEmpty();
    assertThat(run.exitCode()).isZero();
    String orders = new Migrator(OutboxTables.of("outbox")).script();
    String payments =
        new Migrator(OutboxTables.of("billing.payments_outbox", "outbox_dead_letter")).script();
    assertThat(run.out())
        .isEqualTo(
            "-- pipelines: orders, orders-eu\n" + orders + "\n-- pipelines: payments\n" + payments);
    assertThat(payments).contains("CREATE TABLE IF NOT EXISTS \"billing\".\"payments_outbox\" (");
  }
}
