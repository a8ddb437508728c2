package io.outbox.testkit.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * The relay's command lines shown in the shell code blocks of Markdown pages (blocks labelled
 * {@code bash}, {@code sh}, {@code shell}, {@code console} or not labelled; {@code text} blocks are
 * output), and their check against the real picocli command, parsed without running it.
 *
 * <p>A command line is a line, joined with the lines its trailing backslashes continue, whose
 * program is {@code outbox-relay}, {@code ./outbox-relay}, {@code bin/outbox-relay} or {@code
 * .../bin/outbox-relay}, after any {@code VAR=value} assignments and after {@code &&}, {@code ;} or
 * {@code |}; a {@code $ } prompt, a {@code #} comment and redirections are dropped. Two kinds:
 *
 * <ul>
 *   <li>an invocation must parse. A placeholder {@code <id>} may stand where a typed value goes:
 *       when picocli cannot convert it, the parse is tried again with a sample value of a few types
 *       (a number, a UUID, a duration, a time) in its place; anywhere else it is a word like any
 *       other.
 *   <li>a synopsis (usage notation: {@code [optional]}, {@code (a | b)}, {@code list|replay}, an
 *       ellipsis {@code ...} or {@code …}) cannot be parsed: its subcommands must exist (each of
 *       {@code a|b}) and every option it names must be an option of them.
 * </ul>
 */
public final class ShownCommands {

  private static final List<String> SHELL_BLOCKS = List.of("", "bash", "sh", "shell", "console");
  private static final Pattern PROGRAM =
      Pattern.compile("^(?:\\.?/?(?:\\S*/)?bin/|\\./)?outbox-relay$");
  private static final Pattern ASSIGNMENT = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]*=.*");
  private static final Pattern REDIRECTION = Pattern.compile("^(?:[0-9&]?>>?|<)(?!.*>$).*");
  private static final Pattern PLACEHOLDER = Pattern.compile("<[^<>\\s]+>");
  private static final Pattern SYNOPSIS = Pattern.compile("[\\[\\]()]|\\.\\.\\.|…|\\w\\|[\\w-]");
  private static final Pattern QUOTED = Pattern.compile("'[^']*'|\"[^\"]*\"");

  /** Values tried for a placeholder of a typed option: a number, an id, a duration, a time. */
  private static final List<String> SAMPLES =
      List.of("1", "00000000-0000-0000-0000-000000000001", "1h", "2026-01-01T00:00:00Z");

  private static final Pattern OPTION = Pattern.compile("^-{1,2}[A-Za-z][A-Za-z0-9-]*");

  /** A command line of a page: its arguments after the program. */
  public record Shown(String file, int line, String text, List<String> args, boolean synopsis) {
    /** "file:line: `text`". */
    public String describe() {
      return file + ":" + line + ": `" + text + "`";
    }
  }

  private ShownCommands() {}

  /** The relay's command lines of {@code page}'s shell code blocks. */
  public static List<Shown> in(MarkdownPage page) {
    List<Shown> shown = new ArrayList<>();
    for (MarkdownPage.CodeBlock block : page.codeBlocks()) {
      if (!SHELL_BLOCKS.contains(block.info())) {
        continue;
      }
      String[] lines = block.text().split("\n", -1);
      for (int i = 0; i < lines.length; i++) {
        int first = block.line() + i;
        StringBuilder joined = new StringBuilder();
        String line = lines[i];
        while (line.stripTrailing().endsWith("\\") && i + 1 < lines.length) {
          String s = line.stripTrailing();
          joined.append(s, 0, s.length() - 1).append(' ');
          line = lines[++i];
        }
        joined.append(line);
        commandsOf(page.file(), first, withoutComment(joined.toString().strip()), shown);
      }
    }
    return shown;
  }

  private static void commandsOf(String file, int line, String text, List<Shown> shown) {
    if (text.startsWith("$ ")) {
      text = text.substring(2).strip();
    }
    if (SYNOPSIS.matcher(QUOTED.matcher(text).replaceAll("''")).find()) {
      List<String> words = List.of(text.split("\\s+"));
      int i = 0;
      while (i < words.size() && ASSIGNMENT.matcher(words.get(i)).matches()) {
        i++;
      }
      if (i < words.size() && PROGRAM.matcher(words.get(i)).matches()) {
        shown.add(new Shown(file, line, text, words.subList(i + 1, words.size()), true));
      }
      return;
    }
    List<String> segment = new ArrayList<>();
    for (String word : words(text)) {
      if (word.equals("&&") || word.equals("||") || word.equals(";") || word.equals("|")) {
        invocation(file, line, text, segment, shown);
        segment.clear();
      } else {
        segment.add(word);
      }
    }
    invocation(file, line, text, segment, shown);
  }

  private static void invocation(
      String file, int line, String text, List<String> words, List<Shown> shown) {
    int i = 0;
    while (i < words.size() && ASSIGNMENT.matcher(words.get(i)).matches()) {
      i++;
    }
    if (i == words.size() || !PROGRAM.matcher(words.get(i)).matches()) {
      return;
    }
    List<String> args = new ArrayList<>();
    for (String word : words.subList(i + 1, words.size())) {
      if (REDIRECTION.matcher(word).matches() || word.equals("&")) {
        break;
      }
      args.add(word);
    }
    shown.add(new Shown(file, line, text, List.copyOf(args), false));
  }

  /** The line without a {@code #} comment (one that begins a word, outside quotes). */
  private static String withoutComment(String line) {
    char quote = 0;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quote != 0) {
        quote = c == quote ? 0 : quote;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '#' && (i == 0 || Character.isWhitespace(line.charAt(i - 1)))) {
        return line.substring(0, i).strip();
      }
    }
    return line;
  }

  /** Shell words: quotes removed, {@code && || ; |} as words of their own. */
  private static List<String> words(String line) {
    List<String> words = new ArrayList<>();
    StringBuilder word = null;
    char quote = 0;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else {
          word.append(c);
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
        word = word == null ? new StringBuilder() : word;
      } else if (Character.isWhitespace(c) || c == ';' || c == '|' || c == '&') {
        if (word != null) {
          words.add(word.toString());
          word = null;
        }
        if (c == ';') {
          words.add(";");
        } else if (c == '|' || c == '&') {
          boolean doubled = i + 1 < line.length() && line.charAt(i + 1) == c;
          words.add(doubled ? "" + c + c : "" + c);
          i += doubled ? 1 : 0;
        }
      } else {
        word = word == null ? new StringBuilder() : word;
        word.append(c);
      }
    }
    if (word != null) {
      words.add(word.toString());
    }
    return words;
  }

  /**
   * The problems of the command lines {@code which} selects, each as "file:line: `text` why".
   *
   * @param command makes the configured command line (a new one per parse: parsing sets its fields)
   */
  public static List<String> problems(
      List<Shown> shown, Predicate<Shown> which, Supplier<CommandLine> command) {
    List<String> problems = new ArrayList<>();
    for (Shown s : shown) {
      if (!which.test(s)) {
        continue;
      }
      String why = s.synopsis() ? synopsisProblem(s, command.get()) : parseProblem(s, command);
      if (why != null) {
        problems.add(s.describe() + " " + why);
      }
    }
    return problems;
  }

  private static String parseProblem(Shown shown, Supplier<CommandLine> command) {
    return parseProblem(new ArrayList<>(shown.args()), command);
  }

  /**
   * Parses {@code args}; a placeholder picocli cannot convert is replaced by the first sample value
   * of {@link #SAMPLES} it converts, and the rest is parsed on.
   */
  private static String parseProblem(List<String> args, Supplier<CommandLine> command) {
    try {
      command.get().parseArgs(args.toArray(String[]::new));
      return null;
    } catch (ParameterException e) {
      int at = e.getValue() == null ? -1 : args.indexOf(e.getValue());
      if (at < 0 || !PLACEHOLDER.matcher(e.getValue()).find()) {
        return "does not parse: " + e.getMessage();
      }
      for (String sample : SAMPLES) {
        List<String> replaced = new ArrayList<>(args);
        replaced.set(at, sample);
        String problem = parseProblem(replaced, command);
        if (problem == null || !problem.contains("'" + sample + "'")) {
          return problem;
        }
      }
      return "does not parse: no sample value fits placeholder " + e.getValue();
    }
  }

  private static String synopsisProblem(Shown shown, CommandLine root) {
    List<CommandLine> commands = List.of(root);
    boolean inOptions = false;
    for (String arg : shown.args()) {
      String word = arg.replaceAll("[\\[\\]()]", "");
      if (word.isEmpty() || word.equals("|")) {
        continue;
      }
      if (OPTION.matcher(word).find()) {
        inOptions = true;
        String name = word.replaceFirst("=.*", "");
        if (commands.stream().noneMatch(c -> c.getCommandSpec().findOption(name) != null)) {
          return "names option " + name + ", which " + names(commands) + " does not have";
        }
      } else if (!inOptions && commands.stream().allMatch(c -> !c.getSubcommands().isEmpty())) {
        List<CommandLine> next = new ArrayList<>();
        for (String alternative : word.split("\\|")) {
          for (CommandLine c : commands) {
            CommandLine sub = c.getSubcommands().get(alternative);
            if (sub == null) {
              return "names subcommand " + alternative + ", which " + names(commands) + " lacks";
            }
            next.add(sub);
          }
        }
        commands = next;
      }
    }
    return null;
  }

  private static String names(List<CommandLine> commands) {
    return String.join(
        "/", commands.stream().map(c -> c.getCommandSpec().qualifiedName()).distinct().toList());
  }
}
