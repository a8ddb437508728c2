package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * check-config with the NATS and Redis sinks: their passwords and tokens are never printed, and bad
 * values are reported with their full key paths, all at once.
 */
class CheckConfigNatsRedisTest {

  @TempDir Path dir;

  private String checkConfig(String pipelines, int exitCode) throws IOException {
    Path file =
        Files.writeString(
            dir.resolve("relay.conf"), "outbox-relay.pipelines { " + pipelines + " }");
    CommandLineRun run = CommandLineRun.of("check-config", "--config", file.toString());
    assertThat(run.exitCode()).as(run.err()).isEqualTo(exitCode);
    return run.out() + run.err();
  }

  @Test
  void passwordsAndTokensAreMasked() throws IOException {
    String out =
        checkConfig(
            """
            events {
              database.url = "jdbc:postgresql://127.0.0.1:5432/app"
              sink { type = nats, nats { url = "nats://relay:canary-url@nats:4222", token = "canary-token" } }
            }
            jobs {
              database.url = "jdbc:postgresql://127.0.0.1:5432/app"
              table = "jobs_outbox"
              dead-letter-table = "jobs_dead_letter"
              sink { type = redis, redis { uri = "redis://relay:canary-uri@redis:6379/1", password = "canary-password" } }
            }
            """,
            0);

    assertThat(out).doesNotContain("canary");
    Config printed =
        ConfigFactory.parseString(out.substring(0, out.lastIndexOf('}') + 1))
            .getConfig("outbox-relay.pipelines");
    assertThat(printed.getString("events.sink.nats.url"))
        .isEqualTo("nats://relay:******@nats:4222");
    assertThat(printed.getString("events.sink.nats.token")).isEqualTo("******");
    assertThat(printed.getString("jobs.sink.redis.uri"))
        .isEqualTo("redis://relay:******@redis:6379/1");
    assertThat(printed.getString("jobs.sink.redis.password")).isEqualTo("******");
    assertThat(printed.getDuration("jobs.sink.redis.dedup-window").toMinutes()).isEqualTo(60);
  }

  @Test
  void badValuesAreReportedWithTheirKeyPaths() throws IOException {
    String out =
        checkConfig(
            """
            events {
              database.url = "jdbc:postgresql://127.0.0.1:5432/app"
              sink { type = nats, nats { url = "nats://canary-token@nats:4222", max-pending = 0 } }
            }
            jobs {
              database.url = "jdbc:postgresql://127.0.0.1:5432/app"
              table = "jobs_outbox"
              dead-letter-table = "jobs_dead_letter"
              sink { type = redis, redis { uri = "http://redis:6379", connections = 1000 } }
            }
            """,
            2);

    assertThat(out)
        .doesNotContain("canary")
        .contains("outbox-relay.pipelines.events.sink.nats.url")
        .contains(
            "outbox-relay.pipelines.events.sink.nats.max-pending: must be in [1, 1000000], not 0")
        .contains("outbox-relay.pipelines.jobs.sink.redis.uri: must start with redis://")
        .contains(
            "outbox-relay.pipelines.jobs.sink.redis.connections: must be in [1, 256], not 1000");
  }
}
