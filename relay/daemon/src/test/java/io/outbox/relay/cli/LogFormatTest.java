package io.outbox.relay.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.MDC;

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

  @Test
  void jsonLinesCarryAnIsoTimestampAndThePipelineAndLaneOfTheThread() throws Exception {
    List<String> lines =
        logInFormat(
            "json",
            log -> {
              log.info("outbox-relay running 1 pipeline(s): orders");
              Thread lane =
                  new Thread(
                      () -> {
                        MDC.setContextMap(Map.of("pipeline", "orders", "lane", "2"));
                        log.warn(
                            "pipeline orders: event {} dead-lettered",
                            "e-1",
                            new IllegalStateException("broker said \"no\""));
                      },
                      "outbox-relay-orders-lane-2");
              lane.start();
              join(lane);
            });

    ObjectMapper json = new ObjectMapper();
    assertThat(lines).hasSize(2);
    JsonNode plain = json.readTree(lines.get(0));
    assertThat(plain.get("timestamp").asText())
        .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
    assertThat(Instant.parse(plain.get("timestamp").asText()))
        .isBetween(Instant.now().minusSeconds(60), Instant.now());
    assertThat(plain.get("level").asText()).isEqualTo("INFO");
    assertThat(plain.get("logger").asText()).isEqualTo("io.outbox.relay.test");
    assertThat(plain.get("thread").asText()).isEqualTo(Thread.currentThread().getName());
    assertThat(plain.get("message").asText())
        .isEqualTo("outbox-relay running 1 pipeline(s): orders");
    assertThat(plain.has("pipeline")).isFalse();
    assertThat(plain.has("stack_trace")).isFalse();

    JsonNode lane = json.readTree(lines.get(1));
    assertThat(lane.get("level").asText()).isEqualTo("WARN");
    assertThat(lane.get("thread").asText()).isEqualTo("outbox-relay-orders-lane-2");
    assertThat(lane.get("pipeline").asText()).isEqualTo("orders");
    assertThat(lane.get("lane").asText()).isEqualTo("2");
    assertThat(lane.get("message").asText()).isEqualTo("pipeline orders: event e-1 dead-lettered");
    assertThat(lane.get("stack_trace").asText())
        .startsWith("java.lang.IllegalStateException: broker said \"no\"")
        .contains("at io.outbox.relay.cli.LogFormatTest");
  }

  @Test
  void plainLinesStayAsTheyWere() throws Exception {
    List<String> lines =
        logInFormat("plain", log -> log.info("outbox-relay running 1 pipeline(s): orders"));

    assertThat(lines)
        .singleElement()
        .asString()
        .matches(
            "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d) INFO  \\["
                + Thread.currentThread().getName()
                + "\\] io\\.outbox\\.relay\\.test - outbox-relay running 1 pipeline\\(s\\): orders");
  }

  /** The lines {@code logging} writes through the daemon's logback.xml in {@code format}. */
  private static List<String> logInFormat(
      String format, java.util.function.Consumer<Logger> logging) throws Exception {
    LoggerContext context = new LoggerContext();
    context.setMDCAdapter(MDC.getMDCAdapter()); // the one MDC.put writes to
    context.putProperty(LogFormat.ENV, format);
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    PrintStream stderr = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      configurator.doConfigure(LogFormat.class.getResource("/logback.xml"));
      logging.accept(context.getLogger("io.outbox.relay.test"));
    } finally {
      context.stop();
      System.setErr(stderr);
    }
    return captured.toString(StandardCharsets.UTF_8).lines().toList();
  }

  private static void join(Thread t) {
    try {
      t.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
