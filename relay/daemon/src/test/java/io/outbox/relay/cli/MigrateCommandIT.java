package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.testkit.TestDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code outbox-relay migrate} against the real PostgreSQL. */
class MigrateCommandIT {

  @TempDir Path dir;

  private TestDatabase db;

  @BeforeEach
  void createDatabase() {
    db = TestDatabase.create("cli_migrate_it");
  }

  @AfterEach
  void dropDatabase() {
    db.close();
  }

  @Test
  void createsTheTablesOfEveryPipelineAndIsIdempotent() throws Exception {
    Path config =
        write(
            database("orders", "")
                + database(
                    "payments",
                    "table = \"billing.payments_outbox\", dead-letter-table = \"billing.payments_dead\""));

    CommandLineRun first = CommandLineRun.of("migrate", "--config", config.toString());
    CommandLineRun second = CommandLineRun.of("migrate", "--config", config.toString());

    assertThat(first.err()).isEmpty();
    assertThat(first.exitCode()).isZero();
    assertThat(first.out().lines())
        .containsExactly(
            "orders: outbox \"public\".\"outbox\" at version 8 (8 migrations applied)",
            "payments: outbox \"billing\".\"payments_outbox\" at version 8 (8 migrations applied)");
    assertThat(second.err()).isEmpty();
    assertThat(second.exitCode()).isZero();
    assertThat(second.out().lines())
        .containsExactly(
            "orders: outbox \"public\".\"outbox\" at version 8 (0 migrations applied)",
            "payments: outbox \"billing\".\"payments_outbox\" at version 8 (0 migrations applied)");
    assertThat(tableExists("public.outbox")).isTrue();
    assertThat(tableExists("public.outbox_dead_letter")).isTrue();
    assertThat(tableExists("billing.payments_outbox")).isTrue();
    assertThat(tableExists("billing.payments_dead")).isTrue();
  }

  @Test
  void passesDatabasePropertiesToTheDriver() throws Exception {
    Path config =
        write(database("orders", "database.properties { ApplicationName = \"relay-migrate\" }"));

    CommandLineRun run = CommandLineRun.of("migrate", "--config", config.toString());

    assertThat(run.err()).isEmpty();
    assertThat(run.exitCode()).isZero();
    assertThat(tableExists("public.outbox")).isTrue();
  }

  @Test
  void anUnknownDriverPropertyFailsThatPipelineOnly() throws Exception {
    Path config =
        write(
            database("orders", "database.properties { no-such-property = 1 }")
                + database("payments", "table = payments_outbox"));

    CommandLineRun run = CommandLineRun.of("migrate", "--config", config.toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.errLines())
        .containsExactly(
            "orders: database.properties.no-such-property is not a PostgreSQL JDBC driver property");
    assertThat(run.out().lines())
        .containsExactly(
            "payments: outbox \"public\".\"payments_outbox\" at version 8 (8 migrations applied)");
  }

  @Test
  void anUnreachableDatabaseIsOneLinePerPipelineWithoutSecretsAndExits1() throws Exception {
    Path config =
        write(
            """
            outbox-relay.pipelines.orders.database {
              url = "jdbc:postgresql://127.0.0.1:1/nowhere?connectTimeout=2"
              user = app
              password = "canary-password"
            }
            """);

    CommandLineRun run = CommandLineRun.of("migrate", "--config", config.toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).isEmpty();
    assertThat(run.errLines()).hasSize(1);
    assertThat(run.errLines().get(0)).startsWith("orders: ").contains("public.outbox");
    assertThat(run.err()).doesNotContain("canary").doesNotContain("\tat ");
  }

  @Test
  void anInvalidConfigurationExits2WithoutTouchingTheDatabase() throws Exception {
    Path config = write(database("orders", "on-publish = archive"));

    CommandLineRun run = CommandLineRun.of("migrate", "--config", config.toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("outbox-relay.pipelines.orders.on-publish");
    assertThat(tableExists("public.outbox")).isFalse();
  }

  private String database(String pipeline, String extra) {
    String password =
        db.password() == null || db.password().isEmpty()
            ? ""
            : ", password = \"" + db.password() + "\"";
    return "outbox-relay.pipelines."
        + pipeline
        + " {\n  database { url = \""
        + db.url()
        + "\", user = \""
        + db.user()
        + "\""
        + password
        + " }\n  "
        + extra
        + "\n}\n";
  }

  private Path write(String text) throws IOException {
    Path file = Files.createTempFile(dir, "relay", ".conf");
    Files.writeString(file, text);
    return file;
  }

  private boolean tableExists(String name) throws SQLException {
    try (Connection c = db.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT to_regclass('" + name + "') IS NOT NULL")) {
      rs.next();
      return rs.getBoolean(1);
    }
  }
}
