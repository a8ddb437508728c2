package io.outbox.testkit.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.commonmark.ext.heading.anchor.IdGenerator;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Code;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.Heading;
import org.commonmark.node.HtmlBlock;
import org.commonmark.node.HtmlInline;
import org.commonmark.node.IndentedCodeBlock;
import org.commonmark.node.Node;
import org.commonmark.node.Text;
import org.commonmark.parser.IncludeSourceSpans;
import org.commonmark.parser.Parser;

/**
 * One Markdown file of the repository as commonmark-java parses it: its relative links, the anchors
 * its headings get on GitHub (commonmark's heading-anchor ids: lower case, spaces to '-',
 * punctuation dropped, "-1", "-2" for repeats) and explicit {@code <a id>}s, its fenced code blocks
 * and its inline code spans, each with the line it is on.
 */
public final class MarkdownPage {

  private static final Parser PARSER =
      Parser.builder().includeSourceSpans(IncludeSourceSpans.BLOCKS_AND_INLINES).build();

  /** {@code <a id="x">} or {@code <a name="x">} in raw HTML. */
  private static final Pattern EXPLICIT_ANCHOR =
      Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"", Pattern.CASE_INSENSITIVE);

  /** A link's destination, on a line. */
  public record Link(int line, String destination) {}

  /**
   * A code block: its info string (language; empty for an indented block) and its lines, the first
   * on {@code line}.
   */
  public record CodeBlock(int line, String info, String text) {}

  /** An inline code span's text, on a line; {@code linkText} when it is (in) a link's text. */
  public record CodeSpan(int line, String text, boolean linkText) {}

  private final String file;
  private final List<Link> links = new ArrayList<>();
  private final Set<String> anchors = new LinkedHashSet<>();
  private final List<CodeBlock> codeBlocks = new ArrayList<>();
  private final List<CodeSpan> codeSpans = new ArrayList<>();

  private MarkdownPage(String file, String markdown) {
    this.file = file;
    IdGenerator ids = IdGenerator.builder().build();
    PARSER.parse(markdown).accept(new Collector(ids));
  }

  /** Parses {@code text}, named {@code file} in messages. */
  public static MarkdownPage parse(String file, String text) {
    return new MarkdownPage(file, text);
  }

  /** Reads and parses {@code path}, named by its path relative to {@code root}. */
  public static MarkdownPage read(Path root, Path path) {
    try {
      return parse(
          root.relativize(path).toString(), Files.readString(path, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + path, e);
    }
  }

  /** The file's path relative to the repository's root. */
  public String file() {
    return file;
  }

  public List<Link> links() {
    return links;
  }

  public Set<String> anchors() {
    return anchors;
  }

  public List<CodeBlock> codeBlocks() {
    return codeBlocks;
  }

  public List<CodeSpan> codeSpans() {
    return codeSpans;
  }

  /** "file:line". */
  public String at(int line) {
    return file + ":" + line;
  }

  private static int line(Node node) {
    return node.getSourceSpans().isEmpty() ? 0 : node.getSourceSpans().get(0).getLineIndex() + 1;
  }

  private final class Collector extends AbstractVisitor {
    private final IdGenerator ids;
    private boolean inLink;

    Collector(IdGenerator ids) {
      this.ids = ids;
    }

    @Override
    public void visit(org.commonmark.node.Link link) {
      links.add(new Link(line(link), link.getDestination()));
      inLink = true;
      visitChildren(link);
      inLink = false;
    }

    @Override
    public void visit(Heading heading) {
      anchors.add(ids.generateId(textOf(heading)));
      visitChildren(heading);
    }

    @Override
    public void visit(FencedCodeBlock block) {
      // The first line of the block's content follows its opening fence.
      codeBlocks.add(new CodeBlock(line(block) + 1, block.getInfo().strip(), block.getLiteral()));
    }

    @Override
    public void visit(IndentedCodeBlock block) {
      // An indented block has no fence and no language.
      codeBlocks.add(new CodeBlock(line(block), "", block.getLiteral()));
    }

    @Override
    public void visit(Code code) {
      codeSpans.add(new CodeSpan(line(code), code.getLiteral(), inLink));
    }

    @Override
    public void visit(HtmlInline html) {
      explicitAnchors(html.getLiteral());
    }

    @Override
    public void visit(HtmlBlock html) {
      explicitAnchors(html.getLiteral());
    }

    private void explicitAnchors(String html) {
      Matcher m = EXPLICIT_ANCHOR.matcher(html);
      while (m.find()) {
        anchors.add(m.group(1));
      }
    }
  }

  /** A heading's text as GitHub reads it for the anchor: its text and code, without markup. */
  private static String textOf(Node node) {
    StringBuilder text = new StringBuilder();
    node.accept(
        new AbstractVisitor() {
          @Override
          public void visit(Text t) {
            text.append(t.getLiteral());
          }

          @Override
          public void visit(Code c) {
            text.append(c.getLiteral());
          }
        });
    return text.toString();
  }
}
