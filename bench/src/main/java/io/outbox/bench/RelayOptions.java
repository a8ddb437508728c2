package io.outbox.bench;

import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * {@code bench}'s options of the relay process (its JVM, class path and extra settings) and the
 * run's Kafka {@code linger.ms}, which the relay and the baselines share.
 */
final class RelayOptions {

  @Option(
      names = "--relay-jvm-options",
      paramLabel = "OPTIONS",
      defaultValue = "",
      description =
          "JVM options of the relay and Debezium processes, space-separated, e.g."
              + " \"-Xmx256m -XX:StartFlightRecording=filename=relay.jfr\" (default: none). The"
              + " relay's come after the distribution launcher's defaults -XX:TieredStopAtLevel=1"
              + " -XX:+UseSerialGC, so -XX:TieredStopAtLevel=4 runs it with the C2 compiler, and"
              + " a collector named here (-XX:+UseG1GC) replaces the serial one.")
  String jvmOptions;

  @Option(
      names = "--kafka-linger-ms",
      paramLabel = "MS",
      defaultValue = "5",
      description =
          "linger.ms of every Kafka producer of the run: the relay's (written into its"
              + " relay.conf) and the baselines' alike, so that they stay comparable (default: 5,"
              + " the relay's default).")
  int lingerMs;

  @Option(
      names = "--relay-config",
      paramLabel = "HOCON",
      defaultValue = "",
      description =
          "More settings of the relay's pipeline, in HOCON, added to the generated relay.conf,"
              + " e.g. \"database.properties.options = \\\"-c synchronous_commit=off\\\"\""
              + " (default: none).")
  String relayConfig;

  @Option(
      names = "--relay-classpath",
      paramLabel = "PATH",
      defaultValue = "${sys:outbox.bench.relay-classpath:-}",
      description =
          "Class path of the relay process (default: the daemon's, set by the launcher; else"
              + " this JVM's).")
  String relayClasspath;

  /** The relay under test: these options beside the pipeline's {@code source} and {@code sink}. */
  RelayUnderTest.Setup setup(
      String source, String sink, String onPublish, Integer lanes, Integer batchSize) {
    String classpath =
        relayClasspath == null || relayClasspath.isBlank()
            ? System.getProperty("java.class.path")
            : relayClasspath;
    return new RelayUnderTest.Setup(
        source,
        sink,
        onPublish,
        lanes,
        batchSize,
        classpath,
        jvmOptions.isBlank() ? List.of() : Arrays.asList(jvmOptions.trim().split("\\s+")),
        lingerMs == Brokers.DEFAULT_LINGER_MS || !sink.equals("kafka")
            ? relayConfig
            : (relayConfig + "\nsink.kafka.producer.linger.ms = " + lingerMs).strip(),
        null);
  }
}
