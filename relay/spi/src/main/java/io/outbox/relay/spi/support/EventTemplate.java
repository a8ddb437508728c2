package io.outbox.relay.spi.support;

import io.outbox.relay.spi.OutboxEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A name filled in per event: the template language of {@code routing.destination}, {@code
 * dead-letter.destination} and sink settings such as RabbitMQ's {@code routing-key}. It may use
 * {@code ${aggregate_type}}, {@code ${event_type}} and {@code ${aggregate_id}}.
 */
public final class EventTemplate {

  /** The variables a template may use, without {@code ${}}. */
  public static final Set<String> VARIABLES =
      Set.of("aggregate_type", "event_type", "aggregate_id");

  private static final Pattern VARIABLE = Pattern.compile("\\$\\{([^}]*)}");

  private enum Variable {
    AGGREGATE_TYPE,
    EVENT_TYPE,
    AGGREGATE_ID
  }

  private final String template;
  private final List<Object> parts; // String literals and Variable markers, in order
  private final boolean constant;

  private EventTemplate(String template, List<Object> parts) {
    this.template = template;
    this.parts = parts;
    this.constant = parts.stream().noneMatch(p -> p instanceof Variable);
  }

  /**
   * Every mistake in a template, one message each, naming the template: unknown variables and a
   * {@code ${} without its closing brace. Empty when the template is fine.
   */
  public static List<String> problems(String template) {
    List<String> problems = new ArrayList<>();
    Matcher m = VARIABLE.matcher(template);
    while (m.find()) {
      if (!VARIABLES.contains(m.group(1))) {
        problems.add(
            "unknown variable ${"
                + m.group(1)
                + "} in \""
                + template
                + "\"; known: ${aggregate_type}, ${event_type}, ${aggregate_id}");
      }
    }
    if (VARIABLE.matcher(template).replaceAll("").contains("${")) {
      problems.add("unterminated variable in \"" + template + "\" (a ${ without its closing })");
    }
    return problems;
  }

  /**
   * Compiles a template.
   *
   * @throws IllegalArgumentException with the first of its {@link #problems}
   */
  public static EventTemplate parse(String template) {
    List<String> problems = problems(template);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(problems.get(0));
    }
    List<Object> parts = new ArrayList<>();
    Matcher m = VARIABLE.matcher(template);
    int last = 0;
    while (m.find()) {
      if (m.start() > last) {
        parts.add(template.substring(last, m.start()));
      }
      parts.add(
          switch (m.group(1)) {
            case "aggregate_type" -> Variable.AGGREGATE_TYPE;
            case "event_type" -> Variable.EVENT_TYPE;
            default -> Variable.AGGREGATE_ID;
          });
      last = m.end();
    }
    if (last < template.length()) {
      parts.add(template.substring(last));
    }
    return new EventTemplate(template, List.copyOf(parts));
  }

  /** Whether the template has no variables: it renders the same for every event. */
  public boolean isConstant() {
    return constant;
  }

  /** The template filled in for {@code event}. */
  public String render(OutboxEvent event) {
    if (constant) {
      return template;
    }
    StringBuilder sb = new StringBuilder(64);
    for (Object part : parts) {
      if (part instanceof Variable v) {
        sb.append(
            switch (v) {
              case AGGREGATE_TYPE -> event.aggregateType();
              case EVENT_TYPE -> event.eventType();
              case AGGREGATE_ID -> event.aggregateId();
            });
      } else {
        sb.append((String) part);
      }
    }
    return sb.toString();
  }

  /** The template as written. */
  @Override
  public String toString() {
    return template;
  }
}
