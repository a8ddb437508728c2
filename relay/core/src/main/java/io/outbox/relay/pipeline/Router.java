package io.outbox.relay.pipeline;

import io.outbox.relay.spi.OutboxEvent;
import io.outbox.relay.spi.support.EventTemplate;

/**
 * Resolves an event's destination: the row's {@code destination} column when set, otherwise the
 * {@code routing.destination} template ({@link EventTemplate}) filled in.
 */
public final class Router {

  private final EventTemplate template;

  private Router(EventTemplate template) {
    this.template = template;
  }

  /**
   * Compiles a template.
   *
   * @throws IllegalArgumentException naming the template and the unknown variable
   */
  public static Router compile(String template) {
    return new Router(EventTemplate.parse(template));
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
    String destination = template.render(event);
    return destination.isBlank() ? null : destination;
  }

  /** The destination when the template has no variables (the same for every event), else null. */
  public String staticDestination() {
    return template.isConstant() && !template.toString().isBlank() ? template.toString() : null;
  }

  @Override
  public String toString() {
    return "Router[" + template + "]";
  }
}
