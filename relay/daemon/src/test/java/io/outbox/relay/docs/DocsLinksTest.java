package io.outbox.relay.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.testkit.docs.LinkCheck;
import io.outbox.testkit.docs.MarkdownPage;
import io.outbox.testkit.docs.RepositoryDocs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every relative link of README.md, the other top-level pages and docs/ resolves. */
class DocsLinksTest {

  @Test
  void everyRelativeLinkAndAnchorResolves() {
    List<MarkdownPage> pages = RepositoryDocs.pages();
    assertThat(pages).extracting(MarkdownPage::file).contains("README.md", "docs/metrics.md");
    LinkCheck check = new LinkCheck(RepositoryDocs.root());
    List<String> problems = new ArrayList<>();
    pages.forEach(page -> problems.addAll(check.problems(page)));

    assertThat(problems).as("broken links").isEmpty();
  }

  @Test
  void reportsAMissingFileAMissingAnchorAndALinkOutOfTheRepository(@TempDir Path root)
      throws IOException {
    Files.createDirectories(root.resolve("docs"));
    Files.writeString(
        root.resolve("docs/other.md"), "# Other page\n\n## Broker down: what `status` says\n");
    String text =
        """
        # Guide

        [ok](other.md#broker-down-what-status-says), [self](#guide), [web](https://example.org/x),
        [gone](missing.md),
        [no anchor](other.md#broker-up)
        and [outside](../../DESIGN.md) [ok too](../docs/other.md)
        """;
    Files.writeString(root.resolve("docs/guide.md"), text);

    List<String> problems =
        new LinkCheck(root).problems(MarkdownPage.read(root, root.resolve("docs/guide.md")));

    assertThat(problems)
        .containsExactly(
            "docs/guide.md:4: (missing.md) no such file docs/missing.md",
            "docs/guide.md:5: (other.md#broker-up) no heading or anchor #broker-up in docs/other.md",
            "docs/guide.md:6: (../../DESIGN.md) points outside the repository");
  }
}
