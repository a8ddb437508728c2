package io.outbox.testkit.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The documentation the docs check reads: every Markdown file at the repository's top level and
 * under docs/, and the example configurations config/*.conf.
 */
public final class RepositoryDocs {

  private RepositoryDocs() {}

  /**
   * The repository's root: {@code outbox.repo.root} when set, else the nearest directory above the
   * working directory (a module's, as Maven runs the tests) holding README.md and docs/.
   */
  public static Path root() {
    String set = System.getProperty("outbox.repo.root");
    if (set != null) {
      return Path.of(set).toAbsolutePath().normalize();
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs"))) {
        return dir;
      }
    }
    throw new IllegalStateException("no README.md and docs/ above " + Path.of("").toAbsolutePath());
  }

  /** README.md, the other top-level .md files and docs/**&#47;*.md, parsed, in path order. */
  public static List<MarkdownPage> pages() {
    Path root = root();
    try (Stream<Path> top = Files.list(root);
        Stream<Path> docs = Files.walk(root.resolve("docs"))) {
      return Stream.concat(top, docs)
          .filter(p -> Files.isRegularFile(p) && p.getFileName().toString().endsWith(".md"))
          .sorted()
          .map(p -> MarkdownPage.read(root, p))
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the Markdown files of " + root, e);
    }
  }

  /** config/*.conf. */
  public static List<Path> exampleConfigs() {
    try (Stream<Path> files = Files.list(root().resolve("config"))) {
      return files.filter(p -> p.getFileName().toString().endsWith(".conf")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + root().resolve("config"), e);
    }
  }
}
