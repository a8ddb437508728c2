package io.outbox.relay.cli;

import io.outbox.admin.DeadLetter;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * Renders dead letters for {@code dead-letters list}: an aligned text table for people, or JSON for
 * scripts.
 *
 * @param pipeline the pipeline name
 * @param table the dead-letter table, as the user writes it
 * @param rows the rows shown
 * @param total how many matched (more than {@code rows} when the limit cut the list)
 */
record DeadLetterListing(String pipeline, String table, List<DeadLetter> rows, int total) {

  private static final int MAX_CELL = 40;
  private static final int MAX_ERROR = 100;
  private static final String[] HEADINGS = {
    "EVENT ID", "TYPE", "AGGREGATE", "REASON", "ATTEMPTS", "DEAD-LETTERED AT", "LAST ERROR"
  };

  /** The text table, a summary line after it. */
  String text() {
    if (rows.isEmpty()) {
      return pipeline + ": no dead letters match in " + table + "\n";
    }
    TextTable lines = new TextTable(HEADINGS);
    for (DeadLetter d : rows) {
      lines.row(
          d.eventId().toString(),
          TextTable.cut(d.eventType(), MAX_CELL),
          TextTable.cut(d.aggregateType() + "/" + d.aggregateId(), MAX_CELL),
          d.reason(),
          Integer.toString(d.attempts()),
          seconds(d.deadLetteredAt()),
          TextTable.cut(d.lastError() == null ? "" : d.lastError(), MAX_ERROR));
    }
    StringBuilder out = new StringBuilder(lines.toString());
    out.append(pipeline).append(": ");
    if (rows.size() < total) {
      out.append("showing ")
          .append(rows.size())
          .append(" of ")
          .append(DeadLetterCommand.deadLetters(total))
          .append(" in ")
          .append(table)
          .append(" (--limit 0 shows all)\n");
    } else {
      out.append(DeadLetterCommand.deadLetters(total)).append(" in ").append(table).append('\n');
    }
    return out.toString();
  }

  /**
   * {@code {"pipeline", "table", "total", "dead_letters": [...]}}, one object per row with the
   * column names as keys; timestamps are ISO-8601 instants.
   */
  String json() {
    return JsonDocument.of(
        g -> {
          g.writeStringField("pipeline", pipeline);
          g.writeStringField("table", table);
          g.writeNumberField("total", total);
          g.writeArrayFieldStart("dead_letters");
          for (DeadLetter d : rows) {
            g.writeStartObject();
            g.writeNumberField("id", d.id());
            g.writeStringField("event_id", d.eventId().toString());
            g.writeStringField("aggregate_type", d.aggregateType());
            g.writeStringField("aggregate_id", d.aggregateId());
            g.writeStringField("event_type", d.eventType());
            g.writeStringField("destination", d.destination());
            g.writeStringField("reason", d.reason());
            g.writeNumberField("attempts", d.attempts());
            g.writeStringField("created_at", String.valueOf(d.createdAt()));
            g.writeStringField("dead_lettered_at", String.valueOf(d.deadLetteredAt()));
            g.writeStringField("last_error", d.lastError());
            g.writeStringField("pipeline", d.pipeline());
            g.writeEndObject();
          }
          g.writeEndArray();
        });
  }

  private static String seconds(Instant t) {
    return t == null ? "" : t.truncatedTo(ChronoUnit.SECONDS).toString();
  }
}
