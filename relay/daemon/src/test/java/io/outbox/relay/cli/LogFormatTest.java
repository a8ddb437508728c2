package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LogFormatTest {

  @Test
  void theEnvironmentNamesTheFormatInAnyCase() {
    assertThat(LogFormat.fromEnvironment(null)).isEqualTo(LogFormat.PLAIN);
    assertThat(LogFormat.fromEnvironment(" ")).isEqualTo(LogFormat.PLAIN);
    assertThat(LogFormat.fromEnvironment("json")).isEqualTo(LogFormat.JSON);
    assertThat(LogFormat.fromEnvironment("JSON ")).isEqualTo(LogFormat.JSON);
    assertThat(LogFormat.fromEnvironment("Plain")).isEqualTo(LogFormat.PLAIN);
  }

  @Test
  void anUnknownFormatNamesTheVariableAndTheValue() {
    assertThatThrownBy(() -> LogFormat.fromEnvironment("xml"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("OUTBOX_LOG_FORMAT must be 'plain' or 'json', got 'xml'");
  }

  @Test
  void eachFormatHasItsLogbackFile() {
    for (LogFormat f : LogFormat.values()) {
      assertThat(LogFormat.class.getResource("/outbox-relay-log-" + f.appender() + ".xml"))
          .as(f.appender())
          .isNotNull();
    }
  }
}
