package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.testkit.docs.MarkdownPage;
import io.outbox.testkit.docs.RepositoryDocs;
import io.outbox.testkit.docs.ShownCommands;
import io.outbox.testkit.docs.ShownCommands.Shown;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every command line of the relay that the docs show in a shell code block parses with the relay's
 * own command line (ShownCommands says what counts and how placeholders and synopses are read).
 * {@code bench} lines are the bench module's (its DocumentedBenchCommandsTest): the daemon's {@code
 * bench} only says where the harness is.
 */
class DocumentedCommandsTest {

  private static final Predicate<Shown> NOT_BENCH =
      s -> s.args().isEmpty() || !s.args().get(0).equals("bench");

  @AfterEach
  void plainLogs() {
    // Parsing --log-format json applies it; the tests after this one log as plain text.
    LogFormat.PLAIN.apply();
  }

  private static CommandLine relay() {
    PrintWriter none = new PrintWriter(Writer.nullWriter());
    return Main.commandLine(none, none);
  }

  @Test
  void everyCommandLineTheDocsShowParses() {
    List<Shown> shown =
        RepositoryDocs.pages().stream().flatMap(p -> ShownCommands.in(p).stream()).toList();
    assertThat(shown.stream().filter(NOT_BENCH))
        .as("command lines in the docs")
        .hasSizeGreaterThan(20);

    assertThat(ShownCommands.problems(shown, NOT_BENCH, DocumentedCommandsTest::relay))
        .as("command lines of the docs that the relay refuses")
        .isEmpty();
  }

  @Test
  void reportsAnUnknownOptionSubcommandOrMissingValue() {
    MarkdownPage page =
        MarkdownPage.parse(
            "docs/x.md",
            """
            ```bash
            $ ./outbox-relay run --config relay.conf   # fine
            OUTBOX_LOG_FORMAT=json bin/outbox-relay status --config r.conf --json > s.json
            outbox-relay check-config --config relay.conf --verbos
            cd dist && ./bin/outbox-relay start --config relay.conf
            outbox-relay dead-letters replay --config relay.conf --pipeline orders \\
              --id <event-id> --limit
            outbox-relay dead-letters list|replay|purge --config FILE [--dry-run] ...
            outbox-relay dead-letters list|replay --config FILE [--dryrun]
            ```

            ```text
            outbox-relay run: no configuration file
            ```
            """);
    List<Shown> shown = ShownCommands.in(page);
    assertThat(shown).extracting(Shown::line).containsExactly(2, 3, 4, 5, 6, 8, 9);

    assertThat(ShownCommands.problems(shown, NOT_BENCH, DocumentedCommandsTest::relay))
        .hasSize(4)
        .satisfiesExactly(
            p ->
                assertThat(p)
                    .startsWith("docs/x.md:4: `outbox-relay check-config")
                    .contains("--verbos"),
            p -> assertThat(p).startsWith("docs/x.md:5: `cd dist && ./bin").contains("start"),
            p ->
                assertThat(p)
                    .startsWith("docs/x.md:6: `outbox-relay dead-letters replay")
                    .contains("--limit"),
            p -> assertThat(p).startsWith("docs/x.md:9: ").contains("names option --dryrun"));
  }
}
