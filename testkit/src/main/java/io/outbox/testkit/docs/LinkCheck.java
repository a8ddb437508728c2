package io.outbox.testkit.docs;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Checks the relative links of Markdown pages: the file (or directory) exists inside the
 * repository, and a {@code #anchor} into a Markdown file names one of its headings or explicit
 * anchors. Links with a scheme (https:, mailto:) are not followed: the check needs no network.
 */
public final class LinkCheck {

  private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

  private final Path root;
  private final Map<Path, MarkdownPage> parsed = new HashMap<>();

  public LinkCheck(Path root) {
    this.root = root.toAbsolutePath().normalize();
  }

  /** The problems of {@code page}'s links, each as "file:line: link (why)". */
  public List<String> problems(MarkdownPage page) {
    List<String> problems = new ArrayList<>();
    Path self = root.resolve(page.file()).normalize();
    for (MarkdownPage.Link link : page.links()) {
      if (!followed(link)) {
        continue;
      }
      String destination = link.destination();
      int hash = destination.indexOf('#');
      String file = hash < 0 ? destination : destination.substring(0, hash);
      String anchor = hash < 0 ? null : destination.substring(hash + 1);
      file = URLDecoder.decode(file.replace("+", "%2B"), StandardCharsets.UTF_8);
      Path target =
          file.isEmpty()
              ? self
              : (file.startsWith("/") ? root.resolve(file.substring(1)) : self.resolveSibling(file))
                  .normalize();
      String why = null;
      if (!target.startsWith(root)) {
        why = "points outside the repository";
      } else if (!Files.exists(target)) {
        why = "no such file " + root.relativize(target);
      } else if (anchor != null && target.toString().endsWith(".md")) {
        MarkdownPage into = target.equals(self) ? page : parsed(target);
        if (!into.anchors().contains(anchor)) {
          why = "no heading or anchor #" + anchor + " in " + into.file();
        }
      }
      if (why != null) {
        problems.add(page.at(link.line()) + ": (" + destination + ") " + why);
      }
    }
    return problems;
  }

  /** Whether the check follows {@code link}: a relative one, not a URL with a scheme. */
  public static boolean followed(MarkdownPage.Link link) {
    return !link.destination().isEmpty() && !SCHEME.matcher(link.destination()).find();
  }

  private MarkdownPage parsed(Path file) {
    return parsed.computeIfAbsent(file, f -> MarkdownPage.read(root, f));
  }
}
