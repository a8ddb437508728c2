package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.client.OutboxTables;
import io.outbox.schema.Migrator;
import io.outbox.testkit.Sql;
import io.outbox.testkit.TestDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code outbox-relay dead-letters list | replay | purge} against the real PostgreSQL. */
class DeadLettersCommandIT {

  @TempDir static Path dir;

  private static TestDatabase db;
  private static Path config;

  @BeforeAll
  static void migrate() throws IOException {
    db = TestDatabase.create("cli_dead_letters_it");
    new Migrator(OutboxTables.of("outbox", "outbox_dead_letter"))
        .migrate(db.url(), db.user(), db.password());
    config = dir.resolve("relay.conf");
    Files.writeString(
        config,
        "outbox-relay.pipelines.orders.database { url = \""
            + db.url()
            + "\", user = \""
            + db.user()
            + "\", password = \""
            + db.password()
            + "\" }\n");
  }

  @AfterAll
  static void dropDatabase() {
    db.close();
  }

  @BeforeEach
  void empty() throws SQLException {
    sql("TRUNCATE outbox, outbox_dead_letter");
  }

  @Test
  void listShowsATableOldestFirstWithFilters() throws SQLException {
    UUID a = dead(1, "OrderCreated", "permanent", "now() - interval '3 hours'", "too large");
    UUID b = dead(2, "OrderPaid", "max-attempts", "now() - interval '2 hours'", "timeout\nline2");
    UUID c = dead(3, "OrderPaid", "permanent", "now() - interval '1 minute'", null);

    CommandLineRun all = run("list");
    CommandLineRun paid = run("list", "--event-type", "OrderPaid", "--reason", "permanent");
    CommandLineRun recent = run("list", "--since", "90m");
    CommandLineRun limited = run("list", "--limit", "2");
    CommandLineRun none = run("list", "--id", UUID.randomUUID().toString());

    assertThat(all.exitCode()).as(all.err()).isZero();
    List<String> lines = all.out().lines().toList();
    assertThat(lines.get(0))
        .matches("EVENT ID +TYPE +AGGREGATE +REASON +ATTEMPTS +DEAD-LETTERED AT +LAST ERROR");
    assertThat(lines.get(1)).startsWith(a.toString()).contains("order/k1", "too large");
    assertThat(lines.get(2)).startsWith(b.toString()).contains("max-attempts", "timeout line2");
    assertThat(lines.get(3)).startsWith(c.toString()).contains(" 4 ");
    assertThat(lines.get(4)).isEqualTo("orders: 3 dead letters in public.outbox_dead_letter");
    assertThat(paid.out().lines()).hasSize(3).element(1).asString().startsWith(c.toString());
    assertThat(recent.out().lines()).hasSize(3).element(1).asString().startsWith(c.toString());
    assertThat(limited.out().lines())
        .hasSize(4)
        .last()
        .isEqualTo(
            "orders: showing 2 of 3 dead letters in public.outbox_dead_letter"
                + " (--limit 0 shows all)");
    assertThat(none.exitCode()).isZero();
    assertThat(none.out())
        .isEqualTo("orders: no dead letters match in public.outbox_dead_letter\n");
  }

  @Test
  void listPrintsJson() throws SQLException {
    UUID a = dead(1, "OrderCreated", "permanent", "'2026-01-01T00:00:00Z'", "say \"no\"");

    CommandLineRun json = run("list", "--json");

    assertThat(json.exitCode()).as(json.err()).isZero();
    assertThat(json.out().replaceAll("\\s+", ""))
        .isEqualTo(
            ("{\"pipeline\":\"orders\",\"table\":\"public.outbox_dead_letter\",\"total\":1,"
                    + "\"dead_letters\":[{\"id\":1,\"event_id\":\"%s\",\"aggregate_type\":\"order\","
                    + "\"aggregate_id\":\"k1\",\"event_type\":\"OrderCreated\",\"destination\":null,"
                    + "\"reason\":\"permanent\",\"attempts\":4,"
                    + "\"created_at\":\"2025-12-01T00:00:00Z\","
                    + "\"dead_lettered_at\":\"2026-01-01T00:00:00Z\","
                    + "\"last_error\":\"say\\\"no\\\"\",\"pipeline\":\"orders\"}]}")
                .formatted(a));
  }

  @Test
  void replayMovesTheChosenEventsBackWithAttemptsReset() throws SQLException {
    UUID a = dead(1, "OrderCreated", "permanent", "now()", "boom");
    UUID b = dead(2, "OrderPaid", "max-attempts", "now()", "boom");

    CommandLineRun dry = run("replay", "--id", a.toString(), "--dry-run");
    assertThat(strings("SELECT count(*)::text FROM outbox")).containsExactly("0");
    CommandLineRun replay = run("replay", "--id", a.toString());
    CommandLineRun again = run("replay", "--id", a.toString());

    assertThat(dry.out())
        .isEqualTo(
            "orders: would replay 1 dead letter into public.outbox (dry run, nothing changed)\n");
    assertThat(replay.exitCode()).as(replay.err()).isZero();
    assertThat(replay.out()).isEqualTo("orders: replayed 1 dead letter into public.outbox\n");
    assertThat(again.out()).isEqualTo("orders: replayed 0 dead letters into public.outbox\n");
    assertThat(
            strings(
                "SELECT event_id || ' ' || attempts || ' ' || coalesce(last_error, '-') || ' '"
                    + " || coalesce(next_attempt_at::text, '-') FROM outbox"))
        .containsExactly(a + " 0 - -");
    assertThat(strings("SELECT event_id::text FROM outbox_dead_letter"))
        .containsExactly(b.toString());
  }

  @Test
  void replayCountsEventsAlreadyInTheOutboxAsSkipped() throws SQLException {
    UUID a = dead(1, "OrderCreated", "permanent", "now()", "boom");
    sql(
        "INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload)"
            + " VALUES ('"
            + a
            + "', 'order', 'k1', 'OrderCreated', '{}')");

    CommandLineRun replay = run("replay", "--all");

    assertThat(replay.exitCode()).isZero();
    assertThat(replay.out())
        .isEqualTo(
            "orders: replayed 0 dead letters into public.outbox, skipped 1 whose event id is"
                + " already in the outbox (they stay dead-lettered)\n");
    assertThat(strings("SELECT count(*)::text FROM outbox_dead_letter")).containsExactly("1");
  }

  @Test
  void purgeDeletesAndCounts() throws SQLException {
    dead(1, "OrderCreated", "permanent", "now() - interval '10 days'", "boom");
    dead(2, "OrderCreated", "permanent", "now() - interval '8 days'", "boom");
    UUID recent = dead(3, "OrderCreated", "permanent", "now()", "boom");

    CommandLineRun dry = run("purge", "--until", "7d", "--dry-run");
    CommandLineRun purge = run("purge", "--until", "7d");
    CommandLineRun all = run("purge", "--all", "--dry-run");

    assertThat(dry.out())
        .isEqualTo(
            "orders: would purge 2 dead letters from public.outbox_dead_letter"
                + " (dry run, nothing changed)\n");
    assertThat(purge.out())
        .isEqualTo("orders: purged 2 dead letters from public.outbox_dead_letter\n");
    assertThat(all.out()).startsWith("orders: would purge 1 dead letter ");
    assertThat(strings("SELECT event_id::text FROM outbox_dead_letter"))
        .containsExactly(recent.toString());
  }

  @Test
  void replayAndPurgeNeedAllOrACriterion() throws SQLException {
    dead(1, "OrderCreated", "permanent", "now()", "boom");

    for (String action : List.of("replay", "purge")) {
      CommandLineRun bare = run(action);
      CommandLineRun both = run(action, "--all", "--reason", "permanent");
      assertThat(bare.exitCode()).isEqualTo(2);
      assertThat(bare.errLines().get(0))
          .isEqualTo(
              "outbox-relay dead-letters "
                  + action
                  + ": "
                  + action
                  + " needs --all, or at least one of --id, --reason, --event-type, --since,"
                  + " --until to choose the dead letters");
      assertThat(both.exitCode()).isEqualTo(2);
      assertThat(both.errLines().get(0)).contains("do not combine it with --id");
    }
    assertThat(strings("SELECT count(*)::text FROM outbox_dead_letter")).containsExactly("1");
  }

  @Test
  void badArgumentsAreUsageErrors() {
    CommandLineRun pipeline = run("list", "--pipeline", "nope");
    CommandLineRun id = run("purge", "--id", "not-a-uuid");
    CommandLineRun reason = run("list", "--reason", "tired");
    CommandLineRun since = run("list", "--since", "yesterday");
    CommandLineRun noAction = CommandLineRun.of("dead-letters");

    assertThat(pipeline.exitCode()).isEqualTo(2);
    assertThat(pipeline.errLines().get(0))
        .endsWith("no pipeline 'nope' in the configuration; it has: orders");
    assertThat(id.exitCode()).isEqualTo(2);
    assertThat(id.errLines().get(0))
        .endsWith("--id must be an event id (a UUID), not 'not-a-uuid'");
    assertThat(reason.exitCode()).isEqualTo(2);
    assertThat(reason.errLines().get(0)).contains("--reason must be max-attempts or permanent");
    assertThat(since.exitCode()).isEqualTo(2);
    assertThat(since.errLines().get(0)).contains("--since must be an ISO-8601 instant");
    assertThat(noAction.exitCode()).isEqualTo(2);
    assertThat(noAction.err()).contains("list").contains("replay").contains("purge");
  }

  @Test
  void anUnreachableDatabaseExits1WithoutAStackTrace() throws IOException {
    Path unreachable = dir.resolve("unreachable.conf");
    Files.writeString(
        unreachable,
        "outbox-relay.pipelines.orders.database {"
            + " url = \"jdbc:postgresql://127.0.0.1:1/nowhere?connectTimeout=2\","
            + " password = \"canary-password\" }\n");

    CommandLineRun list =
        CommandLineRun.of(
            "dead-letters", "list", "--config", unreachable.toString(), "--pipeline", "orders");

    assertThat(list.exitCode()).isEqualTo(1);
    assertThat(list.errLines()).hasSize(1);
    assertThat(list.errLines().get(0)).startsWith("list: cannot connect to the database: ");
    assertThat(list.err()).doesNotContain("canary").doesNotContain("\tat ");
  }

  private static CommandLineRun run(String action, String... args) {
    List<String> all =
        new ArrayList<>(List.of("dead-letters", action, "--config", config.toString()));
    if (!List.of(args).contains("--pipeline")) {
      all.addAll(List.of("--pipeline", "orders"));
    }
    all.addAll(List.of(args));
    return CommandLineRun.of(all.toArray(String[]::new));
  }

  /** A dead letter of pipeline orders, key k1, 4 attempts; {@code at} is an SQL expression. */
  private static UUID dead(long id, String type, String reason, String at, String error)
      throws SQLException {
    UUID eventId = UUID.randomUUID();
    try (Connection c = db.connect();
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO outbox_dead_letter (id, event_id, aggregate_type, aggregate_id,"
                    + " event_type, payload, created_at, available_at, attempts, last_error,"
                    + " dead_lettered_at, reason, pipeline) VALUES (?, ?, 'order', 'k1', ?, '{}',"
                    + " '2025-12-01T00:00:00Z', '2025-12-01T00:00:00Z', 4, ?, "
                    + at
                    + ", ?, 'orders')")) {
      s.setLong(1, id);
      s.setObject(2, eventId);
      s.setString(3, type);
      s.setString(4, error);
      s.setString(5, reason);
      s.executeUpdate();
    }
    return eventId;
  }

  private static void sql(String sql) throws SQLException {
    Sql.execute(db::connect, sql);
  }

  private static List<String> strings(String sql) throws SQLException {
    return Sql.strings(db::connect, sql);
  }
}
