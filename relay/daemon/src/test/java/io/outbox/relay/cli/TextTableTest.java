package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class TextTableTest {

  @Test
  void padsColumnsToTheWidestCellTwoSpacesApartWithoutTrailingBlanks() {
    String table = new TextTable("id", "type", "error").row("1", "order.created", null).toString();

    assertThat(table).isEqualTo("id  type           error\n1   order.created\n");
  }

  @Test
  void showsCellsAsTheyAreOnOneLine() {
    // Broker errors and event types are data: picocli's markup is not read, line breaks go.
    String table = new TextTable("error").row("@|bold refused|@\nretry\tlater").toString();

    assertThat(table).isEqualTo("error\n@|bold refused|@ retry later\n");
  }

  @Test
  void cutsLongValuesWithAnEllipsisAndRefusesRowsOfTheWrongWidth() {
    assertThat(TextTable.cut("abcdef", 4)).isEqualTo("abc…");
    assertThat(TextTable.cut("abc", 4)).isEqualTo("abc");
    assertThatThrownBy(() -> new TextTable("a", "b").row("1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a row of 1 cells for 2 columns");
  }
}
