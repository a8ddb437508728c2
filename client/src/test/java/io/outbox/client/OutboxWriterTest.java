package io.outbox.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OutboxWriterTest {

  @Test
  void headersBecomeAJsonObjectWithEscapedStrings() {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("plain", "v");
    headers.put("quote\"back\\slash", "line\nbreak\ttab\u0001");

    assertThat(OutboxWriter.headersJson(headers))
        .isEqualTo("{\"plain\":\"v\",\"quote\\\"back\\\\slash\":\"line\\nbreak\\ttab\\u0001\"}");
    assertThat(OutboxWriter.headersJson(Map.of())).isEqualTo("{}");
  }

  @Test
  void rejectsBadTableNamesNamingTheValue() {
    assertThatThrownBy(() -> OutboxWriter.forTable("billing.out-box"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'billing.out-box'");
  }

  @Test
  void writesToTheQuotedTable() {
    assertThat(OutboxWriter.forTable("Billing.Outbox").tables().qualifiedTable())
        .isEqualTo("\"Billing\".\"Outbox\"");
  }
}
