package io.outbox.relay.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.outbox.schema.DeadLetter;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
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

  private static final JsonFactory JSON = new JsonFactory();
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
    List<String[]> lines = new ArrayList<>();
    lines.add(HEADINGS);
    for (DeadLetter d : rows) {
      lines.add(
          new String[] {
            d.eventId().toString(),
            cell(d.eventType(), MAX_CELL),
            cell(d.aggregateType() + "/" + d.aggregateId(), MAX_CELL),
            d.reason(),
            Integer.toString(d.attempts()),
            seconds(d.deadLetteredAt()),
            cell(d.lastError() == null ? "" : d.lastError(), MAX_ERROR)
          });
    }
    int[] widths = new int[HEADINGS.length];
    for (String[] line : lines) {
      for (int i = 0; i < line.length; i++) {
        widths[i] = Math.max(widths[i], line[i].length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (String[] line : lines) {
      StringBuilder row = new StringBuilder();
      for (int i = 0; i < line.length; i++) {
        row.append(i == 0 ? "" : "  ").append(line[i]);
        if (i < line.length - 1) {
          row.append(" ".repeat(widths[i] - line[i].length()));
        }
      }
      out.append(row.toString().stripTrailing()).append('\n');
    }
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
    StringWriter text = new StringWriter();
    try (JsonGenerator g = JSON.createGenerator(text)) {
      g.useDefaultPrettyPrinter();
      g.writeStartObject();
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
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write JSON to a string", e);
    }
    return text + "\n";
  }

  /** One line, control characters as spaces, cut to {@code max} characters. */
  private static String cell(String value, int max) {
    String line = value.replaceAll("\\p{Cntrl}", " ");
    return line.length() <= max ? line : line.substring(0, max - 1) + "…";
  }

  private static String seconds(Instant t) {
    return t == null ? "" : t.truncatedTo(ChronoUnit.SECONDS).toString();
  }
}
