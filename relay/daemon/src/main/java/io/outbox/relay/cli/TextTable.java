package io.outbox.relay.cli;

import java.util.ArrayList;
import java.util.List;

// Kept over picocli's Help.TextTable: that one reads @|style ...|@ markup in cells (broker errors).
/**
 * A plain-text table for people: a heading row, then rows, columns padded to the widest cell and
 * separated by two spaces, no trailing blanks. Cells are one line, control characters shown as
 * spaces.
 */
final class TextTable {
  private final List<String[]> lines = new ArrayList<>();
  private final int columns;

  TextTable(String... headings) {
    this.columns = headings.length;
    lines.add(headings.clone());
  }

  /** Adds a row; {@code null} cells print empty. */
  TextTable row(String... cells) {
    if (cells.length != columns) {
      throw new IllegalArgumentException(
          "a row of " + cells.length + " cells for " + columns + " columns");
    }
    String[] line = new String[columns];
    for (int i = 0; i < columns; i++) {
      line[i] = cells[i] == null ? "" : cells[i].replaceAll("\\p{Cntrl}", " ");
    }
    lines.add(line);
    return this;
  }

  /** One line, cut to {@code max} characters with an ellipsis. */
  static String cut(String value, int max) {
    return value.length() <= max ? value : value.substring(0, max - 1) + "…";
  }

  @Override
  public String toString() {
    int[] widths = new int[columns];
    for (String[] line : lines) {
      for (int i = 0; i < columns; i++) {
        widths[i] = Math.max(widths[i], line[i].length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (String[] line : lines) {
      StringBuilder row = new StringBuilder();
      for (int i = 0; i < columns; i++) {
        row.append(i == 0 ? "" : "  ").append(line[i]);
        if (i < columns - 1) {
          row.append(" ".repeat(widths[i] - line[i].length()));
        }
      }
      out.append(row.toString().stripTrailing()).append('\n');
    }
    return out.toString();
  }
}
