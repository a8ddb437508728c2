package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

class BuildInfoTest {

  @Test
  void isServedAsAPrometheusInfoGaugeOfValueOne() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    BuildInfo.register(registry);

    assertThat(registry.scrape())
        .contains("# TYPE outbox_relay_build_info gauge\n")
        .contains(
            "outbox_relay_build_info{java=\""
                + System.getProperty("java.version")
                + "\",java_vendor=\""
                + System.getProperty("java.vendor")
                + "\",version=\""
                + BuildInfo.version()
                + "\"} 1");
  }

  @Test
  void aBuildNotRunFromItsJarSaysSo() {
    // The tests run from target/classes, without the jar's manifest.
    assertThat(BuildInfo.version()).isEqualTo("development");
  }
}
