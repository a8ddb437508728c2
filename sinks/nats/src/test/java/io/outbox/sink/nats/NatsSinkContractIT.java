package io.outbox.sink.nats;

import io.nats.client.api.DiscardPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.outbox.relay.spi.Sink;
import io.outbox.testkit.Delivered;
import io.outbox.testkit.LocalPorts;
import io.outbox.testkit.NatsTestSupport;
import io.outbox.testkit.Services;
import io.outbox.testkit.SinkContexts;
import io.outbox.testkit.SinkContract;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;

/**
 * The NATS sink passes the sink contract against the JetStream server of {@code
 * scripts/services.sh}: a destination is a subject bound by a stream of its own; the invalid
 * destination is a subject no stream binds.
 */
class NatsSinkContractIT extends SinkContract {

  private static final int FULL_AT = 50;

  private NatsTestSupport nats;
  private final Map<String, String> streamOf = new HashMap<>();

  @BeforeEach
  void connect() throws Exception {
    nats = closeAfter(NatsTestSupport.connect(Services.natsUrl()));
  }

  @Override
  protected String newDestination() throws Exception {
    String stream = NatsTestSupport.unique("CONTRACT");
    String subject = "outbox.contract." + stream;
    nats.createStream(stream, subject);
    streamOf.put(subject, stream);
    return subject;
  }

  /** A stream capped at 50 messages with discard = new, purged down to its newest 25 every 5 ms. */
  @Override
  protected Refusing refusingDestination() throws Exception {
    String stream = NatsTestSupport.unique("FULL");
    String subject = "outbox.contract." + stream;
    nats.createStream(
        StreamConfiguration.builder()
            .name(stream)
            .subjects(subject)
            .storageType(StorageType.File)
            .maxMessages(FULL_AT)
            .discardPolicy(DiscardPolicy.New)
            .build());
    ScheduledExecutorService purger = Executors.newSingleThreadScheduledExecutor();
    closeAfter(purger::shutdownNow);
    purger.scheduleWithFixedDelay(
        () -> {
          try {
            nats.purge(stream, FULL_AT / 2);
          } catch (Exception e) {
            // the stream goes at the end of the test
          }
        },
        5,
        5,
        TimeUnit.MILLISECONDS);
    return new Refusing(subject, "", FULL_AT);
  }

  @Override
  protected Sink newSink(String extraSettings) {
    return create("url = \"" + Services.natsUrl() + "\"\n" + extraSettings);
  }

  @Override
  protected Sink newUnreachableSink() throws Exception {
    return create(
        "url = \"nats://127.0.0.1:"
            + LocalPorts.unbound()
            + "\"\npublish-timeout = 3s\nconnection-timeout = 1s");
  }

  @Override
  protected String invalidDestination() {
    return "outbox.unbound." + NatsTestSupport.unique("nothing");
  }

  @Override
  protected List<Delivered> read(String subject, int expected, Duration timeout) throws Exception {
    return nats.read(streamOf.get(subject), expected, timeout);
  }

  private static Sink create(String hocon) {
    return SinkContexts.sink(NatsSinkProvider.TYPE, hocon);
  }

  /** {@inheritDoc} Here the NATS binding names headers ce-<attribute>. */
  @Override
  protected String cloudEventsBindingPrefix() {
    return "ce-";
  }
}
