package io.outbox.source.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.client.OutboxTables;
import io.outbox.schema.Migrator;
import io.outbox.testkit.Services;
import io.outbox.testkit.Sql;
import io.outbox.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What the start-up check says about dead-letter tables the move could not write. */
class DeadLetterTableCheckIT {

  private static final OutboxTables TABLES = OutboxTables.of("outbox", "outbox_dead_letter");
  private static final String PASSWORD = "dl-check-pw";

  private TestDatabase db;
  private String role;

  @BeforeEach
  void migrate() {
    db = TestDatabase.create("schema_dl_check");
    new Migrator(TABLES).migrate(db.url(), db.user(), db.password());
    role = "outbox_dl_check_" + db.name().substring(db.name().lastIndexOf('_') + 1);
  }

  @AfterEach
  void drop() throws SQLException {
    db.close();
    try (Connection c =
            DriverManager.getConnection(
                Services.jdbcUrl("postgres"), Services.pgUser(), Services.pgPassword());
        Statement st = c.createStatement()) {
      st.execute("DROP ROLE IF EXISTS " + role);
    }
  }

  @Test
  void theMigratedTableIsFine() throws SQLException {
    try (Connection c = db.connect()) {
      assertThat(DeadLetterTableCheck.problem(c, TABLES, true)).isEmpty();
    }
  }

  @Test
  void aMissingTableIsNamed() throws SQLException {
    sql("DROP TABLE outbox_dead_letter");
    assertThat(problem(true))
        .hasValue(
            "dead-letter table public.outbox_dead_letter does not exist (or the relay's role cannot see"
                + " it); run `migrate`");
  }

  @Test
  void aMissingColumnIsNamed() throws SQLException {
    sql("ALTER TABLE outbox_dead_letter DROP COLUMN pipeline");
    assertThat(problem(true))
        .hasValue(
            "dead-letter table public.outbox_dead_letter lacks the column(s) [pipeline] the dead-letter"
                + " move writes; run `migrate`");
  }

  @Test
  void aNotNullColumnTheMoveDoesNotWriteIsNamed() throws SQLException {
    sql("ALTER TABLE outbox_dead_letter ADD COLUMN tenant text NOT NULL");
    assertThat(problem(false))
        .hasValue(
            "column public.outbox_dead_letter.tenant is NOT NULL without a default, and the dead-letter"
                + " move does not write it; give it a default or drop NOT NULL");
    sql("ALTER TABLE outbox_dead_letter ALTER COLUMN tenant SET DEFAULT 'a'");
    assertThat(problem(false)).isEmpty();
  }

  @Test
  void aNullableOutboxColumnCopiedIntoANotNullDeadLetterColumnIsNamed() throws SQLException {
    sql("ALTER TABLE outbox ALTER COLUMN aggregate_id DROP NOT NULL");
    assertThat(problem(false))
        .hasValue(
            "column public.outbox.aggregate_id allows NULL but public.outbox_dead_letter.aggregate_id"
                + " is NOT NULL: a row with a NULL aggregate_id could never be dead-lettered; make"
                + " public.outbox.aggregate_id NOT NULL or drop NOT NULL from"
                + " public.outbox_dead_letter.aggregate_id");
    sql("ALTER TABLE outbox_dead_letter ALTER COLUMN aggregate_id DROP NOT NULL");
    assertThat(problem(false)).isEmpty();
  }

  @Test
  void aColumnOfAnIncompatibleTypeIsNamed() throws SQLException {
    sql(
        "ALTER TABLE outbox_dead_letter ALTER COLUMN headers DROP DEFAULT, ALTER COLUMN headers TYPE integer USING 0");
    assertThat(problem(false))
        .hasValue(
            "dead-letter table public.outbox_dead_letter does not accept the dead-letter move from public.outbox:"
                + " ERROR: column \"headers\" is of type integer but expression is of type jsonb");
  }

  @Test
  void aCheckConstraintIsLeftToTheRunTime() throws SQLException {
    sql("ALTER TABLE outbox_dead_letter ADD CONSTRAINT no_permanent CHECK (reason <> 'permanent')");
    assertThat(problem(true)).isEmpty();
  }

  @Test
  void aRoleWithoutInsertIsRefusedNamingThePrivilege() throws Exception {
    createRole("SELECT, DELETE");
    assertThat(problemAs(false))
        .hasValue(
            "role "
                + role
                + " lacks INSERT on dead-letter table public.outbox_dead_letter: the dead-letter move"
                + " inserts into it; GRANT SELECT, INSERT, DELETE ON \"public\".\"outbox_dead_letter\""
                + " (docs/security.md)");
  }

  @Test
  void selectAndDeleteAreNeededOnlyWhenRetentionDeletesDeadLetters() throws Exception {
    createRole("INSERT");
    assertThat(problemAs(false)).isEmpty();
    assertThat(problemAs(true))
        .hasValueSatisfying(
            p ->
                assertThat(p)
                    .startsWith(
                        "role "
                            + role
                            + " lacks SELECT on dead-letter table public.outbox_dead_letter: retention"
                            + " deletes dead letters (or set retention.dead-letters = off)"));
  }

  private void createRole(String deadLetterGrants) throws SQLException {
    sql("CREATE ROLE " + role + " LOGIN PASSWORD '" + PASSWORD + "'");
    sql("GRANT SELECT, UPDATE, DELETE ON outbox TO " + role);
    sql("GRANT " + deadLetterGrants + " ON outbox_dead_letter TO " + role);
  }

  private Optional<String> problem(boolean deletes) throws SQLException {
    try (Connection c = db.connect()) {
      return DeadLetterTableCheck.problem(c, TABLES, deletes);
    }
  }

  private Optional<String> problemAs(boolean deletes) throws SQLException {
    try (Connection c = DriverManager.getConnection(db.url(), role, PASSWORD)) {
      return DeadLetterTableCheck.problem(c, TABLES, deletes);
    }
  }

  private void sql(String statement) throws SQLException {
    Sql.execute(db::connect, statement);
  }
}
