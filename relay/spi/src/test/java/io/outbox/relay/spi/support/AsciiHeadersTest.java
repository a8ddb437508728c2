package io.outbox.relay.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AsciiHeadersTest {

  @Test
  void asciiValuesGoAsTheyAreOthersAsEncodedWordsThatDecodeBack() {
    for (String v : new String[] {"acmé", "12,50 €", " padded", "=?UTF-8?B?eA==?=", "tab\there"}) {
      String encoded = AsciiHeaders.encode(v);
      assertThat(encoded).startsWith("=?UTF-8?B?").endsWith("?=");
      assertThat(encoded.chars()).allMatch(c -> c > 32 && c < 127);
      assertThat(AsciiHeaders.decode(encoded)).isEqualTo(v);
    }
    assertThat(AsciiHeaders.encode("order.Created-1")).isEqualTo("order.Created-1");
    assertThat(AsciiHeaders.encode("")).isEmpty();
    assertThat(AsciiHeaders.encode(null)).isNull();
    assertThat(AsciiHeaders.decode("plain")).isEqualTo("plain");
    assertThat(AsciiHeaders.decode("=?UTF-8?B?not base64!?=")).isEqualTo("=?UTF-8?B?not base64!?=");
  }

  @Test
  void aNameMustBePrintableAsciiWithoutColonOrBlanks() {
    assertThat(AsciiHeaders.nameProblem("x-tenant", "NATS")).isNull();
    assertThat(AsciiHeaders.nameProblem("", "NATS"))
        .isEqualTo("a header with an empty name cannot be sent to NATS");
    for (String bad : new String[] {"bad name", "a:b", "namé", "tab\t"}) {
      assertThat(AsciiHeaders.nameProblem(bad, "Foo"))
          .contains("'" + bad + "'")
          .contains("cannot be sent to Foo");
    }
  }
}
