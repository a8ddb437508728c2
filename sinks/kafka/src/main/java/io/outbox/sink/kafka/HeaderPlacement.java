package io.outbox.sink.kafka;

import io.outbox.relay.spi.OutboxEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * One entry of {@code sink.kafka.additional-placement}: an event column sent as a record header, as
 * Debezium's outbox event router's {@code table.fields.additional.placement} does with {@code
 * column:header[:alias]}.
 *
 * @param field the event column
 * @param header the header's name (the alias, else the column's name)
 */
record HeaderPlacement(Field field, String header) {

  /** The event columns a placement may name: the relay's names, whatever the table calls them. */
  enum Field {
    EVENT_ID(e -> e.eventId().toString()),
    AGGREGATE_TYPE(OutboxEvent::aggregateType),
    AGGREGATE_ID(OutboxEvent::aggregateId),
    EVENT_TYPE(OutboxEvent::eventType),
    CREATED_AT(e -> e.createdAt().toString());

    private final Function<OutboxEvent, String> value;

    Field(Function<OutboxEvent, String> value) {
      this.value = value;
    }

    String column() {
      return name().toLowerCase(Locale.ROOT);
    }

    String valueOf(OutboxEvent event) {
      return value.apply(event);
    }
  }

  /**
   * Parses {@code column:header[:alias]} entries separated by commas; an empty text is none.
   *
   * @param problems where each bad entry is described
   */
  static List<HeaderPlacement> parse(String text, List<String> problems) {
    List<HeaderPlacement> placements = new ArrayList<>();
    for (String entry : text.split(",")) {
      String e = entry.strip();
      if (e.isEmpty()) {
        continue;
      }
      String[] parts = e.split(":", -1);
      Field field = field(parts[0]);
      if (parts.length < 2 || parts.length > 3 || field == null) {
        problems.add(
            "entry '"
                + e
                + "' must be column:header or column:header:alias, the column one of"
                + " event_id, aggregate_type, aggregate_id, event_type, created_at");
      } else if (!parts[1].equals("header")) {
        problems.add(
            "entry '"
                + e
                + "' places the column in '"
                + parts[1]
                + "'; only header placement is supported (not envelope or partition)");
      } else if (parts.length == 3 && parts[2].isBlank()) {
        problems.add("entry '" + e + "' has an empty alias");
      } else {
        placements.add(new HeaderPlacement(field, parts.length == 3 ? parts[2] : parts[0]));
      }
    }
    return placements;
  }

  private static Field field(String column) {
    for (Field f : Field.values()) {
      if (f.column().equals(column)) {
        return f;
      }
    }
    return null;
  }
}
