package io.outbox.sink.rabbitmq;

import io.outbox.relay.spi.OutboxEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code routing-key} template: literal text with {@code ${aggregate_type}}, {@code
 * ${event_type}} and {@code ${aggregate_id}} replaced by the event's values.
 */
final class RoutingKeyTemplate {

  /** The variables a template may use. */
  static final Set<String> VARIABLES = Set.of("aggregate_type", "event_type", "aggregate_id");

  private static final Pattern VARIABLE = Pattern.compile("\\$\\{([^}]*)}");

  private final String template;
  private final List<Function<OutboxEvent, String>> parts;

  private RoutingKeyTemplate(String template, List<Function<OutboxEvent, String>> parts) {
    this.template = template;
    this.parts = parts;
  }

  /**
   * Parses {@code template}.
   *
   * @throws IllegalArgumentException naming the first unknown or unterminated variable
   */
  static RoutingKeyTemplate parse(String template) {
    String problem = problem(template);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
    List<Function<OutboxEvent, String>> parts = new ArrayList<>();
    Matcher m = VARIABLE.matcher(template);
    int last = 0;
    while (m.find()) {
      String literal = template.substring(last, m.start());
      if (!literal.isEmpty()) {
        parts.add(e -> literal);
      }
      parts.add(
          switch (m.group(1)) {
            case "aggregate_type" -> OutboxEvent::aggregateType;
            case "event_type" -> OutboxEvent::eventType;
            default -> OutboxEvent::aggregateId;
          });
      last = m.end();
    }
    String tail = template.substring(last);
    if (!tail.isEmpty()) {
      parts.add(e -> tail);
    }
    return new RoutingKeyTemplate(template, List.copyOf(parts));
  }

  /** What is wrong with {@code template}, or {@code null} when it is valid. */
  static String problem(String template) {
    Matcher m = VARIABLE.matcher(template);
    int last = 0;
    while (m.find()) {
      if (template.substring(last, m.start()).contains("${")) {
        break;
      }
      if (!VARIABLES.contains(m.group(1))) {
        return "unknown variable ${"
            + m.group(1)
            + "} in \""
            + template
            + "\"; known: ${aggregate_type}, ${event_type}, ${aggregate_id}";
      }
      last = m.end();
    }
    if (template.indexOf("${", last) >= 0) {
      return "unterminated variable in \"" + template + "\" (a ${ without its closing })";
    }
    return null;
  }

  String render(OutboxEvent event) {
    if (parts.isEmpty()) {
      return "";
    }
    if (parts.size() == 1) {
      return parts.get(0).apply(event);
    }
    StringBuilder sb = new StringBuilder();
    for (Function<OutboxEvent, String> part : parts) {
      sb.append(part.apply(event));
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return template;
  }
}
