package io.outbox.sink.kafka;

import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.outbox.relay.spi.support.BrokerUrls;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.relay.spi.support.SettingsText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The Kafka sink's settings, {@code sink.kafka.*}, as {@link #read} reads them: each component is
 * the key of the same name in kebab case; what a key means and its default are written once, in
 * this module's {@code reference.conf}.
 */
public record KafkaSinkSettings(
    String bootstrapServers,
    Map<String, String> producer,
    Duration sendTimeout,
    Duration probeTimeout,
    Delivery delivery,
    String ledgerTopic,
    Duration ledgerRetention,
    String transactionalIdPrefix,
    List<HeaderPlacement> debeziumHeaders) {

  /** {@code sink.kafka.delivery}. */
  public enum Delivery {
    AT_LEAST_ONCE("at-least-once"),
    EXACTLY_ONCE("exactly-once");

    private final String text;

    Delivery(String text) {
      this.text = text;
    }

    /** As written in the configuration. */
    public String text() {
      return text;
    }

    static Delivery parse(String value) {
      for (Delivery d : values()) {
        if (d.text.equals(value)) {
          return d;
        }
      }
      return null;
    }
  }

  public KafkaSinkSettings {
    Objects.requireNonNull(bootstrapServers, "bootstrapServers");
    Objects.requireNonNull(sendTimeout, "sendTimeout");
    Objects.requireNonNull(probeTimeout, "probeTimeout");
    Objects.requireNonNull(delivery, "delivery");
    Objects.requireNonNull(ledgerTopic, "ledgerTopic");
    Objects.requireNonNull(ledgerRetention, "ledgerRetention");
    Objects.requireNonNull(transactionalIdPrefix, "transactionalIdPrefix");
    producer = Collections.unmodifiableMap(new TreeMap<>(producer == null ? Map.of() : producer));
    debeziumHeaders = debeziumHeaders == null ? null : List.copyOf(debeziumHeaders);
  }

  /**
   * Reads {@code sink.kafka}, each key once: the settings, or {@code null} with every problem in
   * {@code r}, without connecting; the producer properties are checked as the Kafka client would
   * check them ({@link ProducerProperties#check}).
   */
  public static KafkaSinkSettings read(SettingsReader r) {
    List<String> servers = servers(r);
    Duration sendTimeout = r.positiveDuration("send-timeout");
    Duration probeTimeout = r.positiveDuration("probe-timeout");
    Delivery delivery = Delivery.parse(r.oneOf("delivery", "at-least-once", "exactly-once"));
    String ledgerTopic =
        r.checked("ledger.topic", t -> t.isBlank() ? null : TopicNames.problem(t.strip()));
    Duration ledgerRetention = r.positiveDuration("ledger.retention");
    String prefix = r.string("transactional-id-prefix");
    List<HeaderPlacement> debeziumHeaders = debeziumHeaders(r);
    Map<String, String> producer = null;
    ConfigValue p = r.raw("producer");
    if (p instanceof ConfigObject object) {
      producer = ProducerProperties.flatten(object.toConfig());
      ProducerProperties.check(r, producer, sendTimeout);
    } else {
      r.problem(
          "producer",
          "must be an object of producer properties such as { \"linger.ms\" = 10 }, not "
              + r.describe("producer"));
    }
    return r.ok()
        ? new KafkaSinkSettings(
            String.join(",", servers),
            producer,
            sendTimeout,
            probeTimeout,
            delivery,
            ledgerTopic.isBlank()
                ? "outbox-relay." + r.pipeline() + ".ledger"
                : ledgerTopic.strip(),
            ledgerRetention,
            prefix.isBlank() ? "outbox-relay." + r.pipeline() : prefix.strip(),
            debeziumHeaders)
        : null;
  }

  /**
   * {@code headers} and {@code additional-placement}: {@code null} for the relay's headers, else
   * the placements after Debezium's {@code id}.
   */
  private static List<HeaderPlacement> debeziumHeaders(SettingsReader r) {
    String form = r.oneOf("headers", "relay", "debezium");
    String placement = r.string("additional-placement");
    if (placement == null) {
      return null;
    }
    List<String> problems = new ArrayList<>();
    List<HeaderPlacement> placements = HeaderPlacement.parse(placement, problems);
    problems.forEach(p -> r.problem("additional-placement", p));
    if ("relay".equals(form) && !placements.isEmpty()) {
      r.problem(
          "additional-placement",
          "applies to headers = debezium only; with headers = relay the row's headers column and"
              + " the relay's five headers are sent");
    }
    return "debezium".equals(form) ? placements : null;
  }

  /** {@code bootstrap-servers}: a string {@code "host:port,host:port"} or a list of them. */
  private static List<String> servers(SettingsReader r) {
    String key = "bootstrap-servers";
    ConfigValue v = r.raw(key);
    List<String> servers;
    if (v != null && v.valueType() == ConfigValueType.LIST) {
      List<String> listed = r.stringList(key, "a list of host:port such as [\"127.0.0.1:9092\"]");
      servers =
          listed == null
              ? null
              : listed.stream().filter(s -> !s.isBlank()).map(String::strip).toList();
    } else {
      String written = r.string(key);
      servers = written == null ? null : BrokerUrls.split(written);
    }
    if (servers == null) {
      return null;
    }
    if (servers.isEmpty()) {
      r.problem(key, "must name at least one host:port, not " + r.describe(key));
    }
    for (String server : servers) {
      String reason = hostPortProblem(server);
      if (reason != null) {
        r.problem(key, "entry '" + server + "' " + reason);
      }
    }
    return servers;
  }

  /** Hides values of properties that look secret (passwords, JAAS configs, keys, tokens). */
  @Override
  public String toString() {
    return SettingsText.of(
        this, Map.of("producer", ProducerProperties.masked(producer), "delivery", delivery.text()));
  }

  /** {@code null} when {@code server} is {@code host:port} with a port in 1..65535. */
  static String hostPortProblem(String server) {
    int colon = server.lastIndexOf(':');
    if (colon <= 0 || colon == server.length() - 1) {
      return "is not host:port";
    }
    String port = server.substring(colon + 1);
    if (!port.chars().allMatch(Character::isDigit) || port.length() > 5) {
      return "has a port that is not a number: '" + port + "'";
    }
    int p = Integer.parseInt(port);
    if (p < 1 || p > 65535) {
      return "has a port outside 1..65535: " + p;
    }
    return null;
  }
}
