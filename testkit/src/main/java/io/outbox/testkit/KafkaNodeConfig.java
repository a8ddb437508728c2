package io.outbox.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * The configuration files of a {@link PrivateKafka}'s node: {@code server.properties} (one KRaft
 * node, its listeners, test-sized replication and timeouts, then the caller's settings) and the
 * {@code logback.xml} of its JVMs.
 *
 * @param dir the node's directory
 * @param port the PLAINTEXT listener's port (the broker talks to itself on it)
 * @param controllerPort the controller listener's port
 * @param tls the certificates of the SSL and SASL_SSL listeners; {@code null}: PLAINTEXT only
 * @param sslPort the SSL listener's port (with {@code tls})
 * @param saslSslPort the SASL_SSL listener's port (with {@code tls})
 * @param proxiedPort the PROXIED listener's port; 0: no proxied listener
 * @param proxyPort the port the PROXIED listener advertises: its {@link FaultProxy}'s
 * @param brokerSettings the caller's settings, after the defaults (the last line of a key wins)
 */
record KafkaNodeConfig(
    Path dir,
    int port,
    int controllerPort,
    TestCertificates tls,
    int sslPort,
    int saslSslPort,
    int proxiedPort,
    int proxyPort,
    Map<String, String> brokerSettings) {

  private static final String HOST = PrivateKafka.HOST;

  KafkaNodeConfig {
    brokerSettings = new TreeMap<>(brokerSettings);
  }

  /** Writes {@code server.properties} and {@code logback.xml} into the node's directory. */
  void write() {
    String properties =
        String.join(
            "\n",
            "process.roles=broker,controller",
            "node.id=1",
            "controller.quorum.bootstrap.servers=" + HOST + ":" + controllerPort,
            "controller.listener.names=CONTROLLER",
            "listeners="
                + listeners()
                + proxiedListener(proxiedPort)
                + ",CONTROLLER://"
                + HOST
                + ":"
                + controllerPort,
            "advertised.listeners=" + listeners() + proxiedListener(proxyPort),
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
                + (tls == null ? "" : ",SSL:SSL,SASL_SSL:SASL_SSL")
                + (proxiedPort == 0 ? "" : ",PROXIED:PLAINTEXT"),
            tlsSettings(),
            "log.dirs=" + dir.resolve("data"),
            "num.partitions=3",
            "auto.create.topics.enable=true",
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "min.insync.replicas=1",
            "group.initial.rebalance.delay.ms=0",
            // After a kill, the restarted controller refuses the broker's registration until the
            // old session expired (9 s by default): keep that wait short.
            "broker.heartbeat.interval.ms=500",
            "broker.session.timeout.ms=3000",
            overrides(),
            "");
    try {
      Files.writeString(dir.resolve("server.properties"), properties, StandardCharsets.UTF_8);
      Files.writeString(dir.resolve("logback.xml"), PrivateKafka.LOGBACK, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the private Kafka's config into " + dir, e);
    }
  }

  /** The caller's settings, after the defaults: the last line of a key wins. */
  private String overrides() {
    StringBuilder sb = new StringBuilder();
    brokerSettings.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
    return sb.toString().strip();
  }

  private String listeners() {
    String plain = "PLAINTEXT://" + HOST + ":" + port;
    return tls == null
        ? plain
        : plain + ",SSL://" + HOST + ":" + sslPort + ",SASL_SSL://" + HOST + ":" + saslSslPort;
  }

  private String proxiedListener(int listenerPort) {
    return proxiedPort == 0 ? "" : ",PROXIED://" + HOST + ":" + listenerPort;
  }

  private String tlsSettings() {
    if (tls == null) {
      return "";
    }
    return String.join(
        "\n",
        "ssl.keystore.type=PKCS12",
        "ssl.keystore.location=" + tls.serverKeyStore(),
        "ssl.keystore.password=" + tls.password(),
        "ssl.key.password=" + tls.password(),
        "sasl.enabled.mechanisms=SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config="
            + "org.apache.kafka.common.security.scram.ScramLoginModule required;");
  }
}
