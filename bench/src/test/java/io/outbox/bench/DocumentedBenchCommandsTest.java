package io.outbox.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.cli.Main;
import io.outbox.testkit.docs.MarkdownPage;
import io.outbox.testkit.docs.RepositoryDocs;
import io.outbox.testkit.docs.ShownCommands;
import io.outbox.testkit.docs.ShownCommands.Shown;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Every {@code outbox-relay bench} line the docs show in a shell code block parses with the
 * harness's own command (the relay's other command lines: the daemon's DocumentedCommandsTest).
 */
class DocumentedBenchCommandsTest {

  private static final Predicate<Shown> BENCH =
      s -> !s.args().isEmpty() && s.args().get(0).equals("bench");

  /** {@code bench ARGS} parsed as BenchMain runs it: the bench command, given ARGS. */
  private static List<String> problems(List<Shown> shown) {
    PrintWriter none = new PrintWriter(Writer.nullWriter());
    List<Shown> args =
        shown.stream()
            .filter(BENCH)
            .map(
                s ->
                    new Shown(
                        s.file(),
                        s.line(),
                        s.text(),
                        s.args().subList(1, s.args().size()),
                        s.synopsis()))
            .toList();
    return ShownCommands.problems(
        args, s -> true, () -> Main.commandLine(new BenchCommand(), none, none));
  }

  @Test
  void everyBenchCommandLineTheDocsShowParses() {
    List<Shown> shown =
        RepositoryDocs.pages().stream().flatMap(p -> ShownCommands.in(p).stream()).toList();
    assertThat(shown.stream().filter(BENCH)).as("bench command lines in the docs").isNotEmpty();

    assertThat(problems(shown)).as("bench command lines the harness refuses").isEmpty();
  }

  @Test
  void reportsAnOptionTheHarnessDoesNotHave() {
    MarkdownPage page =
        MarkdownPage.parse(
            "docs/x.md",
            """
            ```bash
            ./outbox-relay bench --sink rabbitmq --baselines raw
            ./outbox-relay bench --sink rabbitmq --baseline raw
            ```
            """);

    assertThat(problems(ShownCommands.in(page)))
        .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
        .startsWith("docs/x.md:3: `./outbox-relay bench --sink rabbitmq --baseline raw`")
        .contains("--baseline");
  }
}
