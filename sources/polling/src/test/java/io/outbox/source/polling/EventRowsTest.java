package io.outbox.source.polling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EventRowsTest {

  @Test
  void noObjectIsNoHeaders() throws Exception {
    assertThat(EventRows.headers(null)).isEmpty();
    assertThat(EventRows.headers("{}")).isEmpty();
  }

  @Test
  void stringValuesAreUnquotedOthersKeepTheirJsonTextAndNullsAreLeftOut() throws Exception {
    // As jsonb prints it (keys by length, ": " and ", "), and as jsonb_each_text gives the values.
    String json =
        "{\"a\": {\"b\": [1, 2.50]}, \"c\": null, \"d\": true, \"e\": 12.50, \"s\": \"x\\\"y\\u00e9\","
            + " \"arr\": [\"p\", {\"q\": null}]}";

    assertThat(EventRows.headers(json))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "a", "{\"b\": [1, 2.50]}",
                "d", "true",
                "e", "12.50",
                "s", "x\"y\u00e9",
                "arr", "[\"p\", {\"q\": null}]"));
  }

  @Test
  void jsonThatIsNotAnObjectIsNoHeaders() throws Exception {
    assertThat(EventRows.headers("[1, {\"a\": 2}]")).isEmpty();
    assertThat(EventRows.headers("\"text\"")).isEmpty();
    assertThat(EventRows.headers("null")).isEmpty();
  }

  @Test
  void textThatIsNotJsonIsRefusedWithoutQuotingIt() {
    for (String bad : List.of("{\"a\": secret", "{\"a\": \"b\"} secret", "secret")) {
      assertThatThrownBy(() -> EventRows.headers(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("headers are not a JSON object: ")
          .hasMessageNotContaining("secret");
    }
  }
}
