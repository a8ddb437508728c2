package io.outbox.relay;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * What is running: the relay's version (the {@code Implementation-Version} of its jar's manifest)
 * and the Java runtime, for {@code --version} and the gauge {@code outbox_relay_build_info}.
 */
public final class BuildInfo {
  private BuildInfo() {}

  /** The relay's version, or {@code development} when it does not run from its jar. */
  public static String version() {
    String version = BuildInfo.class.getPackage().getImplementationVersion();
    return version != null ? version : "development";
  }

  /** Registers {@code outbox_relay_build_info{version,java,java_vendor} 1}. */
  static void register(MeterRegistry registry) {
    Gauge.builder("outbox.relay.build.info", () -> 1)
        .description("The relay's version and Java runtime, as labels; the value is always 1.")
        .tag("version", version())
        .tag("java", System.getProperty("java.version"))
        .tag("java_vendor", System.getProperty("java.vendor"))
        .register(registry);
  }
}
