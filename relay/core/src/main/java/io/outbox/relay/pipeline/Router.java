package io.outbox.relay.pipeline;

import io.outbox.relay.spi.OutboxEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Resolves an event's destination: the row's {@code destination} column when set, otherwise the
 * {@code routing.destination} template with {@code ${aggregate_type}}, {@code ${event_type}} and
 * {@code ${aggregate_id}} filled in.
 */
public final class Router {

  /** The variables a template may use. */
  public static final Set<String> VARIABLES =
      Set.of("aggregate_type", "event_type", "aggregate_id");

  private static final Pattern VARIABLE = Pattern.compile("\\$\\{([^}]*)}");

  private final String template;
  private final List<Object> parts; // String literals and Variable markers, in order

  private enum Variable {
    AGGREGATE_TYPE,
    EVENT_TYPE,
    AGGREGATE_ID
  }

  private Router(String template, List<Object> parts) {
    this.template = template;
    this.parts = parts;
  }

  /**
   * Compiles a template.
   *
   * @throws IllegalArgumentException naming the template and the unknown variable
   */
  public static Router compile(String template) {
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
            case "aggregate_id" -> Variable.AGGREGATE_ID;
            default ->
                throw new IllegalArgumentException(
                    "unknown variable ${"
                        + m.group(1)
                        + "} in template \""
                        + template
                        + "\"; known: ${aggregate_type}, ${event_type}, ${aggregate_id}");
          });
      last = m.end();
    }
    if (last < template.length()) {
      parts.add(template.substring(last));
    }
    return new Router(template, List.copyOf(parts));
  }

  /**
   * The destination of an event.
   *
   * @return the topic or exchange; {@code null} when it resolves to a blank name (a permanent
   *     failure of that event)
   */
  public String route(OutboxEvent event) {
    String explicit = event.destination();
    if (explicit != null && !explicit.isBlank()) {
      return explicit;
    }
    return render(event);
  }

  /**
   * The template filled in for an event, ignoring the row's {@code destination} column.
   *
   * @return the name; {@code null} when it is blank
   */
  public String render(OutboxEvent event) {
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
    String destination = sb.toString();
    return destination.isBlank() ? null : destination;
  }

  /** The destination when the template has no variables (the same for every event), else null. */
  public String staticDestination() {
    for (Object part : parts) {
      if (part instanceof Variable) {
        return null;
      }
    }
    return template.isBlank() ? null : template;
  }

  @Override
  public String toString() {
    return "Router[" + template + "]";
  }
}
