package io.outbox.relay.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outbox.client.OutboxMessage;
import io.outbox.relay.cli.Main;
import io.outbox.testkit.RelayProcess;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code status} on real data — pending, delayed, retrying and dead-lettered rows — while a relay
 * daemon runs and after it stopped, as a table and as JSON; and the daemon's {@code --log-format
 * json} lines, which must parse and never carry a payload.
 */
class StatusIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension final RelayProcesses relays = new RelayProcesses();
  @TempDir Path dir;

  private RelayFixture fx;

  @AfterEach
  void tearDown() {
    if (fx != null) {
      fx.close();
    }
  }

  /** {@code status} in this JVM, as a user runs it. */
  private record Run(int exit, String out, String err) {}

  private Run status(Path config, String... extra) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    List<String> args = new ArrayList<>(List.of("status", "--config", config.toString()));
    args.addAll(List.of(extra));
    int exit =
        Main.execute(new PrintWriter(out), new PrintWriter(err), args.toArray(String[]::new));
    return new Run(exit, out.toString(), err.toString());
  }

  @Test
  void statusShowsTheDatabaseWhetherTheDaemonRunsOrNotAndJsonLogsCarryNoPayload() throws Exception {
    fx = new RelayFixture("status_data");
    String marker = "payload-marker-" + UUID.randomUUID();
    // Two events due in an hour, one of which already failed once and waits for its retry.
    List<OutboxMessage> rows = new ArrayList<>();
    for (String id : List.of("later", "stuck")) {
      rows.add(
          OutboxMessage.builder()
              .aggregate("order", id)
              .eventType("OrderScheduled")
              .payload("{\"secret\":\"" + marker + "\"}")
              .availableAt(Instant.now().plus(Duration.ofHours(1)))
              .build());
    }
    fx.commit(rows);
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement()) {
      st.executeUpdate(
          "UPDATE outbox SET attempts = 1, next_attempt_at = now() + interval '1 hour',"
              + " last_error = 'broker said no' WHERE aggregate_id = 'stuck'");
    }
    Path config = dir.resolve("relay.conf");
    Files.writeString(config, fx.config(""));

    Run before = status(config);
    assertThat(before.exit()).as(before.err()).isZero();
    assertThat(before.out().lines())
        .containsExactly(
            "PIPELINE  ROLE         PENDING  OLDEST  RETRYING  DEAD LETTERS  LAST ERROR",
            "it        not running  2        -       1         0             broker said no");

    RelayProcess relay = relays.start("a", fx.config(""), Map.of(), "--log-format", "json", "run");
    UUID poison =
        fx.commit(
                List.of(
                    OutboxMessage.builder()
                        .aggregate("order", "poison")
                        .eventType("OrderBroken")
                        .destination("not a valid topic!")
                        .payload("{\"secret\":\"" + marker + "\"}")
                        .build(),
                    RelayFixture.event("flows", 1)))
            .get(0);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> fx.count("SELECT count(*) FROM outbox_dead_letter") == 1);
    await().atMost(Duration.ofSeconds(30)).until(() -> fx.unpublished() == 2);

    JsonNode json = JSON.readTree(status(config, "--json").out());
    JsonNode it = json.get("pipelines").get(0);
    long epoch = it.get("lease").get("epoch").asLong();
    assertThat(epoch).isPositive();
    String role = "active epoch " + epoch;
    String pad = " ".repeat(role.length() - "ROLE".length());

    Run running = status(config);
    assertThat(running.exit()).as(running.err()).isZero();
    assertThat(running.out().lines())
        .containsExactly(
            "PIPELINE  ROLE" + pad + "  PENDING  OLDEST  RETRYING  DEAD LETTERS  LAST ERROR",
            "it        " + role + "  2        -       1         1             broker said no");

    assertThat(it.get("pipeline").asText()).isEqualTo("it");
    assertThat(it.get("table").asText()).isEqualTo("public.outbox");
    assertThat(it.get("role").asText()).isEqualTo("active");
    assertThat(it.get("standbys").asInt()).isZero();
    assertThat(it.get("lease").get("expires_in_seconds").asDouble()).isPositive();
    assertThat(it.get("pending").asLong()).isEqualTo(2);
    assertThat(it.get("oldest_pending_age_seconds").asDouble()).isZero();
    assertThat(it.get("retrying").asLong()).isEqualTo(1);
    assertThat(it.get("dead_letters").asLong()).isEqualTo(1);
    assertThat(it.get("last_error").asText()).isEqualTo("broker said no");

    assertThat(relay.terminate(Duration.ofSeconds(30))).contains(0);
    // Without the retrying row, the newest dead letter's error is the last error.
    try (Connection c = fx.db.connect();
        Statement st = c.createStatement()) {
      st.executeUpdate("DELETE FROM outbox WHERE aggregate_id = 'stuck'");
    }
    JsonNode stopped = JSON.readTree(status(config, "--json").out()).get("pipelines").get(0);
    assertThat(stopped.get("role").asText()).isEqualTo("not running");
    assertThat(stopped.get("pending").asLong()).isEqualTo(1);
    assertThat(stopped.get("retrying").asLong()).isZero();
    assertThat(stopped.get("dead_letters").asLong()).isEqualTo(1);
    assertThat(stopped.get("last_error").asText()).contains("invalid topic name");

    assertJsonLogWithoutPayload(relay, marker, poison);
  }

  private static void assertJsonLogWithoutPayload(RelayProcess relay, String marker, UUID poison)
      throws IOException {
    List<JsonNode> lines = new ArrayList<>();
    for (String line : relay.log().lines().toList()) {
      lines.add(JSON.readTree(line)); // every line is one JSON object
    }
    assertThat(relay.log()).doesNotContain(marker);
    assertThat(lines)
        .allSatisfy(
            l -> {
              assertThat(l.isObject()).isTrue();
              assertThat(l.get("level").asText()).isIn("DEBUG", "INFO", "WARN", "ERROR");
              assertThat(Instant.parse(l.get("timestamp").asText())).isBefore(Instant.now());
              assertThat(l.get("logger").asText()).isNotBlank();
              assertThat(l.get("thread").asText()).isNotBlank();
            });
    List<String> messages = lines.stream().map(l -> l.get("message").asText()).toList();
    assertThat(messages)
        .anyMatch(m -> m.startsWith("outbox-relay running 1 pipeline(s): it"))
        .anyMatch(m -> m.startsWith("pipeline it: stopped"));
    // Lines of the pipeline's threads carry it as a field: the supervisor's, and a lane's.
    assertThat(line(lines, "pipeline it: active, ").get("pipeline").asText()).isEqualTo("it");
    JsonNode deadLettered =
        line(lines, "pipeline it: event " + poison + " dead-lettered (permanent");
    assertThat(deadLettered.get("pipeline").asText()).isEqualTo("it");
    assertThat(deadLettered.get("lane").asText()).matches("\\d+");
    assertThat(deadLettered.get("thread").asText())
        .isEqualTo("outbox-relay-it-lane-" + deadLettered.get("lane").asText());
  }

  private static JsonNode line(List<JsonNode> lines, String messageStart) {
    return lines.stream()
        .filter(l -> l.get("message").asText().startsWith(messageStart))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no line starts with " + messageStart));
  }

  @Test
  void aPipelineWhoseDatabaseCannotBeReadIsReportedAndTheOthersStillShown() throws Exception {
    fx = new RelayFixture("status_partial");
    String hocon =
        fx.config("")
            .replace(
                "pipelines.it {",
                "pipelines.gone { database.url = \"jdbc:postgresql://127.0.0.1:5432/no_such_db_"
                    + UUID.randomUUID().toString().substring(0, 8)
                    + "\", database.user = postgres, sink.type = kafka }\n  pipelines.it {");
    Path config = dir.resolve("two.conf");
    Files.writeString(config, hocon);

    Run run = status(config);
    assertThat(run.exit()).isEqualTo(Main.FAILURE);
    assertThat(run.out().lines()).hasSize(3);
    assertThat(run.out()).contains("it        not running  0").contains("gone      ?");
    assertThat(run.out().lines().filter(l -> l.startsWith("gone")).findFirst().orElseThrow())
        .contains("does not exist");
    JsonNode json = JSON.readTree(status(config, "--json").out());
    assertThat(json.get("pipelines").findValuesAsText("pipeline")).contains("gone", "it");
  }
}
