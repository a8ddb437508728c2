package io.outbox.relay.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.outbox.testkit.docs.MarkdownPage;
import io.outbox.testkit.docs.RepositoryDocs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every configuration key the docs and config/*.conf name exists in a reference.conf. */
class DocsConfigKeysTest {

  /** A reference.conf shaped as the relay's: a root key, pipeline defaults, a plug-in. */
  private static final ReferenceKeys FIXTURE =
      ReferenceKeys.of(
          ConfigFactory.parseString(
              """
              outbox-relay {
                http.port = 9400
                pipelines { }
                pipeline-defaults {
                  database { url = null, password = null, properties { } }
                  retry.max-attempts = 10
                  source.type = polling
                  source.polling { batch-size = 500, lease-timeout = 10s }
                  sink.kafka.producer { linger.ms = 5 }
                }
                free-form-maps { sink.kafka.producer = true }
              }
              """));

  /** Properties of other systems the docs name in code, which begin like keys of ours. */
  private static final Set<String> FOREIGN =
      Set.of(
          // a Kafka topic's retention (the ledger topic's, set from sink.kafka.ledger.retention)
          "retention.ms",
          // a property of Debezium's connector (source.cdc.debezium passes them through)
          "database.sslpassword");

  @Test
  void everyKeyOfTheDocsIsAReferenceKey() {
    ConfigKeyCheck check = new ConfigKeyCheck(ReferenceKeys.fromClassPath(), FOREIGN);
    List<String> problems = new ArrayList<>();
    RepositoryDocs.pages().forEach(page -> problems.addAll(check.problems(page)));

    assertThat(problems).as("unknown configuration keys in the docs").isEmpty();
  }

  @Test
  void everyKeyOfTheExampleConfigurationsIsAReferenceKey() {
    ConfigKeyCheck check = new ConfigKeyCheck(ReferenceKeys.fromClassPath(), Set.of());
    List<Path> files = RepositoryDocs.exampleConfigs();
    assertThat(files).extracting(p -> p.getFileName().toString()).contains("relay.conf");
    List<String> problems = new ArrayList<>();
    files.forEach(file -> problems.addAll(check.problems(RepositoryDocs.root(), file)));

    assertThat(problems).as("unknown configuration keys in config/").isEmpty();
  }

  @Test
  void reportsAMadeUpKeyInlineAndInAHoconBlock() {
    MarkdownPage page =
        MarkdownPage.parse(
            "docs/x.md",
            """
            Set `outbox-relay.pipelines.orders.source.polling.batch-size` or `retry.max-attempts = 3`,
            `source.polling.*`, `outbox-relay.pipelines.<name>.database.password-file`, never
            `source.polling.batch-sise` nor `outbox-relay.http.prot` nor `sink.kafka.produce { }`; `linger.ms` and
            `io.outbox.relay.spi` are not keys of ours, nor [`outbox-relay.service`](x.service).

            ```hocon
            polling {
              lease-timeout = 5s
              lease-timout = 5s
            }
            producer { "max.request.size" = 2097152 }
            ```
            """);

    assertThat(new ConfigKeyCheck(FIXTURE, Set.of()).problems(page))
        .containsExactly(
            "docs/x.md:3: `source.polling.batch-sise` is not a configuration key",
            "docs/x.md:3: `outbox-relay.http.prot` is not a configuration key",
            "docs/x.md:3: `sink.kafka.produce` is not a configuration key",
            "docs/x.md:9: `polling.lease-timout` is not a configuration key");
  }

  @Test
  void reportsAMadeUpKeyOfAConfigurationFile(@TempDir Path root) throws IOException {
    Path file = root.resolve("relay.conf");
    Files.writeString(
        file,
        """
        outbox-relay {
          http.port = 9401
          pipelines.orders {
            database { url = ${?APP_DB_URL}, properties.sslmode = require }
            sink.kafka.producer { "linger.ms" = 20 }
            retry.max-atempts = 3
          }
        }
        """);

    assertThat(new ConfigKeyCheck(FIXTURE, Set.of()).problems(root, file))
        .containsExactly(
            "relay.conf:6: `outbox-relay.pipelines.orders.retry.max-atempts` is not a"
                + " configuration key");
  }

  @Test
  void reportsAHoconBlockThatDoesNotParse() {
    MarkdownPage page =
        MarkdownPage.parse("docs/y.md", "Text\n\n```hocon\nretry {\n  max-attempts = 3\n```\n");

    assertThat(new ConfigKeyCheck(FIXTURE, Set.of()).problems(page))
        .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
        .startsWith("docs/y.md:")
        .contains("the hocon block does not parse");
  }
}
