package io.outbox.sink.kafka;

import io.outbox.relay.spi.PluginContext;
import io.outbox.relay.spi.SecretKeys;
import io.outbox.relay.spi.Sink;
import io.outbox.relay.spi.support.SettingsReader;
import io.outbox.relay.spi.support.SettingsSinkProvider;
import java.util.Map;

/**
 * The {@code kafka} sink: publishes each event as one record to the routed topic, keyed by
 * aggregate id, through an idempotent producer with {@code acks=all}. Settings: {@link
 * KafkaSinkSettings}, defaults in this module's {@code reference.conf}.
 */
public final class KafkaSinkProvider extends SettingsSinkProvider<KafkaSinkSettings> {

  /**
   * Opens the list of event ids in the WARN line of each fall-back from exactly once to at least
   * once (a batch the broker committed only in part, a distrusted ledger record): those events may
   * be read twice by {@code read_committed} consumers. {@code scripts/soak.sh --exactly-once}
   * allows a duplicate only for an event so listed.
   */
  public static final String SENT_TWICE = "exactly once fell back to at least once for event ids";

  /** The {@code sink.type} this provider serves. */
  public static final String TYPE = "kafka";

  private static final String PRODUCER = "producer.";

  /** Called by {@link java.util.ServiceLoader}. */
  public KafkaSinkProvider() {
    super(TYPE, KafkaSinkSettings::read, KafkaSinkProvider::secret, KafkaSinkProvider::sink);
  }

  /**
   * Under {@code producer}, what the Kafka client declares as type {@code PASSWORD} ({@code
   * ssl.keystore.key}, {@code ssl.key.password}, {@code sasl.jaas.config}, ...), except the public
   * certificates it also declares so; properties the client does not declare are left to the
   * relay's fallback by name. The sink's own keys hold no secret.
   */
  private static SecretKeys.Answer secret(String key) {
    return key.startsWith(PRODUCER)
        ? ProducerProperties.secret(key.substring(PRODUCER.length()))
        : SecretKeys.Answer.NOT_SECRET;
  }

  /**
   * The producer connects lazily on the first publish or probe, so this never blocks on the
   * network.
   */
  private static Sink sink(PluginContext context, KafkaSinkSettings settings) {
    if (settings.delivery() == KafkaSinkSettings.Delivery.EXACTLY_ONCE) {
      return createExactlyOnce(context, KafkaClients.KAFKA);
    }
    return create(context, KafkaClients.KAFKA);
  }

  /** The sink of {@code delivery = exactly-once}. */
  static ExactlyOnceKafkaSink createExactlyOnce(
      PluginContext context, KafkaClients.Factory factory) {
    return createExactlyOnce(
        context,
        factory,
        (clients, settings) ->
            new HangingTransactions(
                context.pipeline(), clients, settings.ledgerTopic(), context.ticker()));
  }

  /** As above, with {@code hanging} making the check of hanging transactions (tests). */
  static ExactlyOnceKafkaSink createExactlyOnce(
      PluginContext context,
      KafkaClients.Factory factory,
      java.util.function.BiFunction<KafkaClients, KafkaSinkSettings, HangingTransactions> hanging) {
    Parts p = Parts.of(context, factory, null);
    return new ExactlyOnceKafkaSink(
        context.pipeline(),
        p.settings,
        p.clients,
        p.topics,
        p.producerConfig,
        factory,
        context.lanes(),
        hanging.apply(p.clients, p.settings),
        context.ticker());
  }

  static KafkaSink create(PluginContext context, KafkaClients.Factory factory) {
    return create(context, factory, null);
  }

  /**
   * @param broker answers the topic checks instead of the sink's admin client (tests), or {@code
   *     null}
   */
  static KafkaSink create(
      PluginContext context, KafkaClients.Factory factory, TopicCheck.Broker broker) {
    Parts p = Parts.of(context, factory, broker);
    return new KafkaSink(
        context.pipeline(), p.settings, p.clients, p.topics, context.lanes(), context.ticker());
  }

  /** What both delivery modes are built from. */
  private record Parts(
      KafkaSinkSettings settings,
      Map<String, Object> producerConfig,
      KafkaClients clients,
      TopicCheck topics) {

    static Parts of(PluginContext context, KafkaClients.Factory factory, TopicCheck.Broker broker) {
      KafkaSinkSettings settings =
          SettingsReader.settings(context, KafkaSinkSettings::read, "kafka sink");
      Map<String, Object> producerConfig =
          ProducerProperties.producerConfig(settings, context.pipeline());
      Map<String, Object> adminConfig =
          ProducerProperties.adminConfig(producerConfig, settings.probeTimeout());
      KafkaClients clients =
          new KafkaClients(
              context.pipeline(), producerConfig, adminConfig, factory, context.ticker());
      TopicCheck topics =
          new TopicCheck(
              broker != null ? broker : clients, settings.probeTimeout(), context.clock());
      return new Parts(settings, producerConfig, clients, topics);
    }
  }
}
