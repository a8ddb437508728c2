package io.outbox.relay.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * The JSON a command prints for scripts ({@code status --json}, {@code dead-letters list --json}):
 * one pretty-printed object, a line end after it.
 */
final class JsonDocument {

  private static final JsonFactory JSON = new JsonFactory();

  private JsonDocument() {}

  /** Writes the fields of the document's object. */
  @FunctionalInterface
  interface Fields {
    void write(JsonGenerator g) throws IOException;
  }

  /** The object holding what {@code fields} writes, as text. */
  static String of(Fields fields) {
    StringWriter text = new StringWriter();
    try (JsonGenerator g = JSON.createGenerator(text)) {
      g.useDefaultPrettyPrinter();
      g.writeStartObject();
      fields.write(g);
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write JSON to a string", e);
    }
    return text + "\n";
  }
}
